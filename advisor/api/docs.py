"""ReDoc's bundle as the API docs page loads it: the sidecar's file, its one outside address (Redocly's logo,
fetched from cdn.redoc.ly beside "API docs by Redocly") pointed at a local copy, so that the docs make no
request beyond this server, as they must where the server has no way out."""

from __future__ import annotations

from functools import cache

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.views.decorators.http import require_GET

BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
LOGO_CDN = "https://cdn.redoc.ly/redoc/logo-mini.svg"
LOGO_LOCAL = "vendor/redoc-logo-mini.svg"


@cache
def _bundle() -> bytes:
    path = finders.find(BUNDLE)
    if not isinstance(path, str):
        raise FileNotFoundError(BUNDLE)
    with open(path, "rb") as handle:
        text = handle.read()
    # the source map sits beside the original file, not beside this view's address
    text = text.replace(
        b"sourceMappingURL=redoc.standalone.js.map", f"sourceMappingURL={static(BUNDLE)}.map".encode()
    )
    return text.replace(LOGO_CDN.encode(), static(LOGO_LOCAL).encode())


@require_GET
def redoc_bundle(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(_bundle(), content_type="application/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response
