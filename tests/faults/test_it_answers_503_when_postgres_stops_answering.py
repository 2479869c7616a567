"""A database host that stops answering (its packets dropped rather than refused: a listener that takes the
connection and never says a word) is a 503 after DATABASE_CONNECT_TIMEOUT, not a request held for psycopg's
own 130 s; the same setting bounds a worker's heartbeat, which would otherwise leave its device offline."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

# A page and an API call, each in a fresh process with the settings as the environment gives them; a
# well-formed session key, so that looking it up needs the database.
REQUEST = """
import json
from django.conf import settings
from django.test import Client
client = Client()
page = client.get("/", HTTP_COOKIE="sessionid=" + "a" * 32)
api = client.get("/api/v1/recommendations/", HTTP_AUTHORIZATION="Token " + "b" * 40)
print(json.dumps({
    "timeout": settings.DATABASES["default"]["OPTIONS"]["connect_timeout"],
    "page": [page.status_code, page.content.decode()[:2000]],
    "api": [api.status_code, api.content.decode()],
}))
"""


@pytest.fixture
def silent_database() -> Iterator[int]:
    """A TCP listener that accepts every connection and never answers (PostgreSQL's start-up waits)."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def hold() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


def _ask(port: int, **env: str) -> dict[str, list[object] | int]:
    run = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", REQUEST],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": f"postgres://postgres@127.0.0.1:{port}/advisor", **env},
        capture_output=True,
        text=True,
        # a guard, far above the 2 s asked for: the process would otherwise wait out psycopg's 130 s twice
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_it_answers_503_within_the_connect_timeout(silent_database: int) -> None:
    answer = _ask(silent_database, DATABASE_CONNECT_TIMEOUT="2")
    assert answer["timeout"] == 2
    status, body = answer["page"]  # type: ignore[misc]
    assert status == 503 and "database is unavailable" in str(body).lower()
    status, body = answer["api"]  # type: ignore[misc]
    assert status == 503 and "database is unavailable" in json.loads(str(body))["detail"]


def test_it_waits_ten_seconds_by_default() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_CONNECT_TIMEOUT"}
    run = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.conf import settings; "
         "print(settings.DATABASES['default']['OPTIONS']['connect_timeout'])"],
        cwd=REPO,
        env={**env, "DJANGO_SETTINGS_MODULE": "advisor.settings",
             "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/advisor"},
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    assert run.stdout.strip() == "10"
