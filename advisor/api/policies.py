"""Cross-cutting API policies: pagination, the calibration throttle, URL ids, and the error format."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import exception_handler as drf_exception_handler

# The largest id a 64-bit signed key can hold. Bigger numbers in a URL or a body are answered as "not found" /
# "invalid" instead of reaching the database driver, which raises OverflowError (a 500) on them.
MAX_ID = 2**63 - 1


class IdConverter:
    """`<id:pk>`: like Django's `int`, but at most 18 digits, so every id that matches fits a BigAutoField."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 100


class CalibrationThrottle(SimpleRateThrottle):
    """Calibration submissions per user. The rate is read from settings at each request (not at import, as
    DRF's ScopedRateThrottle does), and counted in a cache all web processes share."""

    scope = "calibrations"

    def __init__(self) -> None:
        self.cache = caches["throttle"]
        super().__init__()

    def get_rate(self) -> str:
        return str(settings.CALIBRATION_THROTTLE_RATE)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not request.user or not request.user.is_authenticated:
            return None  # refused by authentication before it gets here
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with one error shape for every client error: `{"detail": "..."}` for request-level
    problems, `{field: [messages]}` for field problems (DRF already produces both)."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        response.data = {
            "detail": f"too many calibrations submitted; try again in {int(exc.wait) + 1} s "
            f"(limit {settings.CALIBRATION_THROTTLE_RATE} per user)"
        }
    return response
