"""One answer to htmx for every page: the fragment it swaps in, or the whole page otherwise."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django_htmx.http import HttpResponseStopPolling

from advisor.web.auth import HtmxHttpRequest


def wants_fragment(request: HtmxHttpRequest) -> bool:
    """An htmx swap; a history restore (back button, cache miss) needs the whole page."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def page_or_fragment(
    request: HtmxHttpRequest, template: str, fragment: str, context: dict[str, Any]
) -> HttpResponse:
    """`template`, or only its `fragment` (a django-template-partials partial) for an htmx swap."""
    if wants_fragment(request):
        return render(request, f"{template}#{fragment}", context)
    return render(request, template, context)


def job_page(
    request: HtmxHttpRequest, template: str, context: dict[str, Any], *, finished: bool
) -> HttpResponse:
    """A job's page; its polled `status` fragment answers 286 once the job finished, which tells htmx to stop
    polling: the job will not change any more."""
    response = page_or_fragment(request, template, "status", context)
    if finished and wants_fragment(request):
        return HttpResponseStopPolling(response.content)
    return response
