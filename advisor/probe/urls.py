"""The probe's pages (included by advisor/urls.py before the catch-all of advisor.web)."""

from __future__ import annotations

from django.urls import include, path

from advisor.probe import routing, views  # noqa: F401  (registers <pid:...>)

# one probe's page and what its buttons post, under probes/<pid:pk>/
PROBE = [
    path("", views.probe, name="probe"),
    path("cancel/", views.cancel, name="probe-cancel"),
    path("next/", views.next_probe, name="probe-next"),
]

urlpatterns = [
    path("recommendations/<pid:pk>/probe/", views.new_probe, name="probe-new"),
    path("recommendations/<pid:pk>/probe/samples/", views.add_sample, name="probe-add-sample"),
    path("probes/<pid:pk>/", include(PROBE)),
    path("history/probes/", views.probe_history, name="probe-history"),
    path("samples/", views.sample_list, name="samples"),
    path("samples/<pid:pk>/delete/", views.delete_sample, name="sample-delete"),
]
