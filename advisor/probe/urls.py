"""The probe's pages (included by advisor/urls.py before the catch-all of advisor.web)."""

from __future__ import annotations

from django.urls import path

from advisor.probe import routing, views  # noqa: F401  (registers <pid:...>)

urlpatterns = [
    path("recommendations/<pid:pk>/probe/", views.new_probe, name="probe-new"),
    path("recommendations/<pid:pk>/probe/samples/", views.add_sample, name="probe-add-sample"),
    path("probes/<pid:pk>/", views.probe, name="probe"),
    path("probes/<pid:pk>/cancel/", views.cancel, name="probe-cancel"),
    path("probes/<pid:pk>/next/", views.next_probe, name="probe-next"),
    path("history/probes/", views.probe_history, name="probe-history"),
    path("samples/", views.sample_list, name="samples"),
    path("samples/<pid:pk>/delete/", views.delete_sample, name="sample-delete"),
]
