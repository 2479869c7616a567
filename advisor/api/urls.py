from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from advisor.api import views

app_name = "api"

urlpatterns = [
    path("recommendations/", views.recommendations, name="recommendations"),
    path("recommendations/<int:pk>/", views.recommendation_detail, name="recommendation-detail"),
    path("calibrations/", views.calibrations, name="calibrations"),
    path("calibrations/<int:pk>/", views.calibration_detail, name="calibration-detail"),
    path("calibrations/<int:pk>/cancel/", views.calibration_cancel, name="calibration-cancel"),
    path("devices/", views.devices, name="devices"),
    path("catalog/gpus/", views.gpu_catalog, name="catalog-gpus"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
]
