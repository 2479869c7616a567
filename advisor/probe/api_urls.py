"""/api/v1/samples/ and /api/v1/probes/ (included by advisor/urls.py next to the contract's endpoints)."""

from __future__ import annotations

from django.urls import path, register_converter

from advisor.api.policies import IdConverter
from advisor.probe import api

app_name = "probe_api"
register_converter(IdConverter, "id")

urlpatterns = [
    path("samples/", api.SampleViewSet.as_view({"get": "list", "post": "create"}), name="samples"),
    path(
        "samples/<id:pk>/",
        api.SampleViewSet.as_view({"get": "retrieve", "delete": "destroy"}),
        name="sample-detail",
    ),
    path("probes/", api.ProbeViewSet.as_view({"get": "list", "post": "create"}), name="probes"),
    path("probes/<id:pk>/", api.ProbeViewSet.as_view({"get": "retrieve"}), name="probe-detail"),
    path("probes/<id:pk>/cancel/", api.ProbeViewSet.as_view({"post": "cancel"}), name="probe-cancel"),
]
