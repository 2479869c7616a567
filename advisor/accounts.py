"""Accounts: the signed-in user a view acts for, and the user's API token (DRF's authtoken), created on first
use and replaceable."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from rest_framework.authtoken.models import Token


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
