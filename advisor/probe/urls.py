"""The probe's pages (included by advisor/urls.py before the catch-all of advisor.web)."""

from __future__ import annotations

from django.urls import path, register_converter

from advisor.api.policies import IdConverter
from advisor.probe import views

register_converter(IdConverter, "id")

urlpatterns = [
    path("recommendations/<id:pk>/probe/", views.new_probe, name="probe-new"),
    path("recommendations/<id:pk>/probe/samples/", views.add_sample, name="probe-add-sample"),
    path("probes/<id:pk>/", views.probe, name="probe"),
    path("probes/<id:pk>/cancel/", views.cancel, name="probe-cancel"),
    path("samples/", views.sample_list, name="samples"),
    path("samples/<id:pk>/delete/", views.delete_sample, name="sample-delete"),
]
