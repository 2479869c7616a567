"""Account writes: the user's API token (DRF's authtoken), created on first use and replaceable."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from rest_framework.authtoken.models import Token


def api_token(user: Any) -> Token:
    token, _ = Token.objects.get_or_create(user=user)
    return token


def regenerate_api_token(user: Any) -> Token:
    """Replace the token: scripts using the old one stop working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)
