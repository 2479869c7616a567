from __future__ import annotations

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

handler404 = "advisor.api.policies.not_found"

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico whatever the page's <link rel="icon"> says.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", include("advisor.probe.api_urls")),
    path("api/v1/", include("advisor.api.urls")),
    path("", include("advisor.probe.urls")),
    path("", include("advisor.web.urls")),
]
