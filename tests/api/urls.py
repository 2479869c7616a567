"""The API alone, mounted where advisor/urls.py mounts it: API tests don't depend on the pages."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [path("api/v1/", include("advisor.api.urls"))]
