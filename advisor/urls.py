from __future__ import annotations

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, register_converter
from django.views.generic import RedirectView

from advisor.ids import IdConverter

handler404 = "advisor.api.policies.not_found"
register_converter(IdConverter, "id")  # every `<id:pk>` below: ids that fit a 64-bit key

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
