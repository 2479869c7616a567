from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

handler404 = "advisor.api.policies.not_found"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("advisor.probe.api_urls")),
    path("api/v1/", include("advisor.api.urls")),
    path("", include("advisor.probe.urls")),
    path("", include("advisor.web.urls")),
]
