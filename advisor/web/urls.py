from __future__ import annotations

from django.urls import path

from advisor.web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("recommendations/new/", views.recommend, name="recommend"),
    path("recommendations/<int:pk>/", views.recommendation, name="recommendation"),
    path("recommendations/<int:pk>/calibrate/", views.calibrate, name="calibrate"),
    path("calibrations/<int:pk>/", views.calibration, name="calibration"),
]
