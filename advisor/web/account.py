"""The account pages: the user's API token, how to use it from a script, and replacing it; how they hear
that a job finished (webhook, email)."""

from __future__ import annotations

from django import forms
from django.core.validators import URLValidator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from advisor import accounts
from advisor.accounts import signed_in
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


class NotificationsForm(forms.Form):
    webhook_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        validators=[URLValidator(schemes=["http", "https"])],
        label="Webhook URL",
        help_text="POSTed JSON when a job of yours finishes or fails: "
        '{"event": "job.finished", "kind", "id", "status", "error", "device", "url", "api"}',
    )
    email = forms.BooleanField(required=False, label="Email me too")


@require_http_methods(["GET", "POST"])
@login_required
def notifications(request: HttpRequest) -> HttpResponse:
    """How the user hears that a job finished or failed (advisor/notify.py)."""
    user = signed_in(request.user)
    current = accounts.notifications(user)
    initial = {"webhook_url": current.webhook_url, "email": current.email}
    form = NotificationsForm(request.POST if request.method == "POST" else None, initial=initial)
    context = {"form": form, "email": user.email, "saved": False}
    if request.method == "POST":
        if not form.is_valid():
            return render(request, "advisor/notifications.html", context, status=400)
        accounts.set_notifications(user, **form.cleaned_data)
        context["saved"] = True
    return render(request, "advisor/notifications.html", context)
