"""The account page: the user's API token, how to use it from a script, and replacing it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from advisor import accounts
from advisor.web.auth import login_required


@require_GET
@login_required
def token(request: HttpRequest) -> HttpResponse:
    api_token = accounts.api_token(request.user)
    base = request.build_absolute_uri("/")[:-1]
    return render(request, "advisor/token.html", {"token": api_token.key, "base": base})


@require_POST
@login_required
def regenerate_token(request: HttpRequest) -> HttpResponse:
    accounts.regenerate_api_token(request.user)
    return redirect("token")
