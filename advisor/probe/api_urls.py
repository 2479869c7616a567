"""/api/v1/samples/ and /api/v1/probes/ (included by advisor/urls.py next to the contract's endpoints)."""

from __future__ import annotations

from django.urls import path

from advisor.probe import api, routing  # noqa: F401  (registers <pid:...>)

app_name = "probe_api"

urlpatterns = [
    path("samples/", api.SampleViewSet.as_view({"get": "list", "post": "create"}), name="samples"),
    path(
        "samples/<pid:pk>/",
        api.SampleViewSet.as_view({"get": "retrieve", "delete": "destroy"}),
        name="sample-detail",
    ),
    path("probes/", api.ProbeViewSet.as_view({"get": "list", "post": "create"}), name="probes"),
    path("probes/<pid:pk>/", api.ProbeViewSet.as_view({"get": "retrieve"}), name="probe-detail"),
    path("probes/<pid:pk>/cancel/", api.ProbeViewSet.as_view({"post": "cancel"}), name="probe-cancel"),
    path("probes/<pid:pk>/next/", api.ProbeViewSet.as_view({"post": "next_step"}), name="probe-next"),
]
