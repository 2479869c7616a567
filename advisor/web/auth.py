"""login_required that also serves htmx: an expired session on a polled fragment sends the whole page to the
login form (HX-Redirect) instead of swapping the login page into a fragment's place; and the page of a
sign-in locked after too many failures; `visible`, a selector's answer or a 404."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required as django_login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

View = Callable[..., HttpResponse]
Row = TypeVar("Row")


class HtmxHttpRequest(HttpRequest):
    """The request type of views that read django-htmx's details (its middleware sets them on every one)."""

    htmx: HtmxDetails


def login_required(view: View) -> View:
    plain = django_login_required(view)

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        htmx: Any = getattr(request, "htmx", None)
        if htmx and not request.user.is_authenticated:
            back = htmx.current_url_abs_path or request.get_full_path()
            return HttpResponseClientRedirect(
                f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': back})}"
            )
        return plain(request, *args, **kwargs)

    return wrapper


def visible(row: Row | None, noun: str) -> Row:
    """A selector's row (`queries.recommendation_for(user, pk)`, ...), or "no such <noun>" as a 404: a row
    that does not exist and another user's are answered alike."""
    if row is None:
        raise Http404(f"no such {noun}")
    return row


def locked_out(request: HttpRequest, response: HttpResponse | None, credentials: Any) -> HttpResponse:
    """django-axes's answer to a locked sign-in (AXES_LOCKOUT_CALLABLE): the page that says why, for how
    long, and who can unlock it, with 429."""
    context = {
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "cooloff_minutes": round(float(settings.AXES_COOLOFF_TIME) * 60),
    }
    return render(request, "registration/locked_out.html", context, status=429)
