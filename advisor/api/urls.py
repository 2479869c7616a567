"""/api/v1/: the contract's endpoints, its OpenAPI schema and docs pages served from local static files."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from advisor.api import code, docs, metrics, views

app_name = "api"

recommendations = views.RecommendationViewSet.as_view({"get": "list", "post": "create"})
recommendation = views.RecommendationViewSet.as_view({"get": "retrieve"})
calibrations = views.CalibrationViewSet.as_view({"get": "list", "post": "create"})
calibration = views.CalibrationViewSet.as_view({"get": "retrieve"})
cancel = views.CalibrationViewSet.as_view({"post": "cancel"})

urlpatterns = [
    path("recommendations/", recommendations, name="recommendations"),
    path("recommendations/<id:pk>/", recommendation, name="recommendation-detail"),
    path("calibrations/", calibrations, name="calibrations"),
    path("calibrations/<id:pk>/", calibration, name="calibration-detail"),
    path("calibrations/<id:pk>/cancel/", cancel, name="calibration-cancel"),
    path(
        "recommendations/<id:pk>/candidates/<id:index>/code/",
        code.CodeViewSet.as_view({"get": "candidate"}),
        name="candidate-code",
    ),
    path("probes/<id:pk>/code/", code.CodeViewSet.as_view({"get": "probe"}), name="probe-code"),
    path("devices/", views.DeviceList.as_view(), name="devices"),
    path("catalog/gpus/", views.GpuCatalog.as_view(), name="catalog-gpus"),
    path("metrics/", metrics.Metrics.as_view(), name="metrics"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    path("redoc/redoc.standalone.js", docs.redoc_bundle, name="redoc-bundle"),
]
