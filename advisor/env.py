"""Typed readers of environment variables that fail loudly: a typo in a deployment must stop start-up, not
silently fall back to a default."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
N = TypeVar("N", int, float)


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def _env_number(name: str, default: N, parse: Callable[[str], N], kind: str, minimum: N | None) -> N:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = parse(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not {kind}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    return _env_number(name, default, int, "an integer", minimum)


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    return _env_number(name, default, float, "a number", minimum)


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# Defaults that have been public (this repository, docker/compose.yaml, Django's startproject): a key anyone
# can read signs anyone's session.
KNOWN_SECRET_KEYS = frozenset(
    {"dev-only-insecure-key-set-SECRET_KEY-in-production", "change-me-in-production", "changeme", "secret"}
)
MIN_SECRET_LENGTH = 50  # Django's own deploy check (security.W009) asks for 50 characters, 5 of them distinct


def env_secret(name: str, default: str, *, required: bool) -> str:
    """A signing key. Where it is `required` (a public deployment) a missing, short or published key stops
    start-up with a message naming the variable; elsewhere (local use) the default is fine."""
    raw = os.environ.get(name)
    if not required:
        return default if raw is None else raw
    how = (
        f"set {name} to a random string of at least {MIN_SECRET_LENGTH} characters, e.g. "
        '`python -c "import secrets; print(secrets.token_urlsafe(50))"`'
    )
    if not raw:
        raise ImproperlyConfigured(f"{name} is not set: {how}")
    if raw in KNOWN_SECRET_KEYS or raw.startswith("django-insecure-"):
        raise ImproperlyConfigured(f"{name} is a published default: {how}")
    if len(raw) < MIN_SECRET_LENGTH or len(set(raw)) < 5:
        raise ImproperlyConfigured(f"{name} is too short ({len(raw)} characters): {how}")
    return raw
