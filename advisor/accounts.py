"""Accounts: the signed-in user a view acts for, the user's API token (DRF's authtoken), created on first use
and replaceable, and the address a sign-in comes from."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest
from rest_framework.authtoken.models import Token

from advisor.models import Notifications


def signed_in(user: object) -> User:
    """The user a view behind login_required (or an authenticated API view) acts for; a request that got
    past them without one is refused, never served as anonymous."""
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied("sign in first")
    return user


def api_token(user: Any) -> Token:
    token, _ = Token.objects.get_or_create(user=user)
    return token


def regenerate_api_token(user: Any) -> Token:
    """Replace the token: scripts using the old one stop working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def notifications(user: User) -> Notifications:
    """How the user hears of finished jobs: nothing until they say (a row made on first use)."""
    row, _ = Notifications.objects.get_or_create(user=user)
    return row


def set_notifications(user: User, *, webhook_url: str, email: bool) -> Notifications:
    """How the user hears of finished jobs (advisor/notify.py); the URL was checked by the form (http(s))."""
    row, _ = Notifications.objects.update_or_create(
        user=user, defaults={"webhook_url": webhook_url, "email": email}
    )
    return row


def client_address(request: HttpRequest) -> str:
    """The address failed sign-ins are counted under (django-axes): behind FORWARDED_PROXIES proxies, the
    entry of X-Forwarded-For the outermost of ours appended (what a client wrote before it is not trusted);
    else the connection's own address."""
    remote = str(request.META.get("REMOTE_ADDR") or "")
    proxies = int(settings.FORWARDED_PROXIES)
    if not proxies:
        return remote
    forwarded = [
        a.strip() for a in str(request.META.get("HTTP_X_FORWARDED_FOR") or "").split(",") if a.strip()
    ]
    return forwarded[-proxies] if len(forwarded) >= proxies else remote
