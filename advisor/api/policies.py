"""Cross-cutting API policies: pagination, the calibration throttle, JSON in and out, and the error format
(ids in URLs and query parameters: advisor/ids.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import exceptions, parsers, renderers
from rest_framework.pagination import PageNumberPagination
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.utils.encoders import JSONEncoder

from advisor.ids import BadId, parse_id

# Nothing here may import rest_framework.views at module level: its APIView reads DEFAULT_PARSER_CLASSES (this
# module's JSONParser) when it is defined, a circular import whenever this module is imported first.
if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.response import Response

MAX_JSON_DEPTH = 32


def query_id(request: Request, name: str, what: str) -> int | None:
    """The id in query parameter `name` (None when it is absent or empty); a 400 saying it must be `what`
    otherwise."""
    text = request.query_params.get(name, "")
    if not text:
        return None
    try:
        return parse_id(text, what=what)
    except BadId as exc:
        raise exceptions.ValidationError({name: [str(exc)]}) from None


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, bounded in depth. A body nested thousands of levels deep makes json.loads (or a
    later repr of it) raise RecursionError, which DRF does not catch: a 500. Nothing here nests so deep."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError(
                f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels"
            ) from None
        if _depth(data) > MAX_JSON_DEPTH:
            raise exceptions.ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels")
        return data


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            if level <= MAX_JSON_DEPTH:
                stack.extend(
                    (child, level + 1) for child in (node.values() if isinstance(node, dict) else node)
                )
    return deepest


class JSONRenderer(renderers.JSONRenderer):
    """DRF's JSON renderer through orjson: a recommendation (6.5 KB) renders in a tenth of the time, a part of
    the budget of POST /recommendations/ under load (bench/results/api_amd-epyc-2c/README.md). The output is
    DRF's: compact,
    UTF-8, and anything orjson does not know natively (dates, decimals, lazy strings) goes through DRF's own
    encoder. Indented output (`Accept: application/json; indent=4`) is left to DRF."""

    _default = staticmethod(JSONEncoder().default)
    _options = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        if data is None:
            return b""
        if self.get_indent(accepted_media_type or "", renderer_context or {}):
            return bytes(super().render(data, accepted_media_type, renderer_context))
        try:
            return orjson.dumps(data, default=self._default, option=self._options)
        except orjson.JSONEncodeError:  # integers beyond 64 bits: DRF's encoder, as before
            return bytes(super().render(data, accepted_media_type, renderer_context))


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
    from rest_framework.views import exception_handler as drf_exception_handler

    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    wait = getattr(exc, "wait", None)  # Throttled's seconds to wait (untyped in the stubs)
    if response is not None and isinstance(exc, exceptions.Throttled):
        from advisor.jobs import count_refusal

        count_refusal("calibration", {"throttle": []})
    if response is not None and isinstance(exc, exceptions.Throttled) and wait is not None:
        response.data = {
            "detail": f"too many calibrations submitted; try again in {int(wait) + 1} s "
            f"(limit {settings.CALIBRATION_THROTTLE_RATE} per user)"
        }
    return response


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's handler404: under /api/ a URL that matches no route (`/api/v1/calibrations/%C2%84/`) is
    answered in the API's JSON error shape, not with the site's HTML page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception or Http404())
