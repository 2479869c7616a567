"""Production by default outside local use: with a public host name and DEBUG off, the HTTPS settings are on,
the secret key must be a real one, and docker/'s web environment passes `check --deploy` without a warning.
Each case is a fresh `manage.py` process, since settings are read once at start-up."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from typing import Any

import pytest
import yaml

from tests.conftest import REPO

GOOD_KEY = secrets.token_urlsafe(50)
SETTINGS = [
    "PRODUCTION",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_PROXY_SSL_HEADER",
    "CSRF_TRUSTED_ORIGINS",
]


def compose_web_env(**shell: str) -> dict[str, str]:
    """docker/compose.yaml's web environment as compose would interpolate it from `shell`."""
    compose = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())

    def interpolate(match: re.Match[str]) -> str:
        name, how, fallback = match.group(1), match.group(2), match.group(3) or ""
        if shell.get(name):
            return shell[name]
        if how == "?":
            raise LookupError(f"compose refuses: {name}: {fallback}")
        return fallback

    env = compose["services"]["web"]["environment"]
    return {k: re.sub(r"\$\{(\w+)(?::([?-])([^}]*))?\}", interpolate, str(v)) for k, v in env.items()}


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG"}}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def read_settings(env: dict[str, str]) -> dict[str, Any]:
    code = (
        "from django.conf import settings as s; import json; "
        f"print(json.dumps({{n: getattr(s, n) for n in {SETTINGS!r}}}))"
    )
    result = manage(env, "shell", "-c", code)
    assert result.returncode == 0, result.stderr[-3000:]
    values: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return values


def test_docker_web_environment_passes_the_deploy_check() -> None:
    env = compose_web_env(SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="advisor.example.org")
    result = manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS"])
def test_compose_refuses_to_start_without(missing: str) -> None:
    given = {"SECRET_KEY": GOOD_KEY, "ALLOWED_HOSTS": "advisor.example.org"}
    del given[missing]
    with pytest.raises(LookupError, match=missing):
        compose_web_env(**given)


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("change-me-in-production", "published default"),
        ("dev-only-insecure-key-set-SECRET_KEY-in-production", "published default"),
        ("django-insecure-" + "x" * 50, "published default"),
        ("short-but-random-8Hq", "too short"),
        ("", "is not set"),
    ],
)
def test_it_refuses_a_weak_secret_in_production_naming_the_variable(key: str, why: str) -> None:
    env = compose_web_env(SECRET_KEY=GOOD_KEY, ALLOWED_HOSTS="advisor.example.org") | {"SECRET_KEY": key}
    result = manage(env, "check")
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY" in result.stderr and why in result.stderr


def test_a_public_host_turns_the_https_settings_on() -> None:
    values = read_settings({"SECRET_KEY": GOOD_KEY, "ALLOWED_HOSTS": "advisor.example.org,127.0.0.1"})
    assert values["PRODUCTION"] and values["SECURE_SSL_REDIRECT"]
    assert values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"]
    assert values["SECURE_HSTS_SECONDS"] >= 31_536_000
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["CSRF_TRUSTED_ORIGINS"] == ["https://advisor.example.org"]


@pytest.mark.parametrize(
    "env",
    [
        {},  # make run on a laptop: the dev key is fine, plain HTTP
        {"ALLOWED_HOSTS": "advisor.example.org", "DEBUG": "1"},  # DEBUG says it is not production
    ],
)
def test_local_use_keeps_plain_http_and_the_dev_key(env: dict[str, str]) -> None:
    values = read_settings(env)
    assert not values["PRODUCTION"] and not values["SECURE_SSL_REDIRECT"]
    assert not values["SESSION_COOKIE_SECURE"] and values["SECURE_HSTS_SECONDS"] == 0


def test_each_https_setting_can_be_turned_off_alone() -> None:
    values = read_settings(
        {"SECRET_KEY": GOOD_KEY, "ALLOWED_HOSTS": "advisor.example.org", "SECURE_SSL_REDIRECT": "0"}
    )
    assert not values["SECURE_SSL_REDIRECT"] and values["SESSION_COOKIE_SECURE"]
