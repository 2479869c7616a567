"""503 while the database is unreachable (restarting, failing over, the network gone): every request that
needs it is answered "try again shortly" with the reason, instead of a 500, and the server recovers by itself
when the database is back (Django drops a connection that failed at the end of the request, and
CONN_HEALTH_CHECKS re-checks a kept one before reuse)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

log = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            return self.get_response(request)
        except (OperationalError, InterfaceError) as exc:  # raised by a middleware below, before any view
            return self._unavailable(request, exc)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if isinstance(exc, OperationalError | InterfaceError):
            return self._unavailable(request, exc)
        return None

    def _unavailable(self, request: HttpRequest, exc: Exception) -> HttpResponse:
        log.warning("database unavailable for %s %s: %s", request.method, request.path, exc)
        reason = f"the database is unavailable ({type(exc).__name__}); try again in a few seconds"
        if request.path.startswith("/api/"):
            response: HttpResponse = JsonResponse({"detail": reason}, status=503)
        else:
            response = HttpResponse(
                "<!doctype html><title>Unavailable</title><h1>Back in a moment</h1>"
                f"<p>{reason.capitalize()}.</p>",
                status=503,
            )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
