"""Fixtures of the API tests: devices, recommendations, a staff client, and a private Redis broker."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from advisor import services, workers
from advisor.models import Device, Recommendation
from tests.conftest import need, spawn

REDIS_SERVER = "/usr/bin/redis-server"


def client_for(user: Any) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture(autouse=True)
def _fresh_throttle() -> None:
    caches["throttle"].clear()


@pytest.fixture
def other_api(other_user: Any) -> APIClient:
    return client_for(other_user)


@pytest.fixture
def staff_api(django_user_model: Any) -> APIClient:
    return client_for(
        django_user_model.objects.create_user(username="root", password="x" * 12, is_staff=True)
    )


@pytest.fixture
def device() -> Device:
    (row,) = workers.register_devices(
        host="apitest",
        worker="cpu0@apitest",
        devices=[{"kind": "cpu", "index": 0, "name": "Test CPU", "cores": 2, "threads": 2}],
    )
    return row


@pytest.fixture
def offline_device() -> Device:
    (row,) = workers.register_devices(
        host="gone", worker="cpu0@gone", devices=[{"kind": "cpu", "index": 0, "name": "Old CPU", "cores": 4}]
    )
    Device.objects.filter(pk=row.pk).update(last_seen=timezone.now() - timedelta(hours=1))
    row.refresh_from_db()
    return row


@pytest.fixture
def rec(user: Any, tabular_spec: dict[str, Any]) -> Recommendation:
    return services.advise(owner=user, spec=tabular_spec)


@pytest.fixture
def others_rec(other_user: Any, tabular_spec: dict[str, Any]) -> Recommendation:
    return services.advise(owner=other_user, spec=tabular_spec)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A private redis-server on a free port that a test can stop and start again (same port, empty)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server") or REDIS_SERVER
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10  # a readiness poll: fails only if the server never answers
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    return
            except Exception:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def client(self) -> Any:
        import redis

        return redis.Redis(port=self.port, socket_connect_timeout=1)


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    need(bool(shutil.which("redis-server")) or Path(REDIS_SERVER).exists(), "redis-server is not installed")
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _reset_publishing(app: Any) -> None:
    """Make the next publish take its connection from the pool of the current broker URL. kombu keeps one pool
    per connection URL in a process-wide registry, so the other URL's pool is left as it is, still usable."""
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def redis_broker(redis_server: RedisServer, settings: Any) -> Iterator[RedisServer]:
    """Point the publishing side (this process) at the private Redis, as CELERY_BROKER_URL would."""
    from advisor.celery import app

    # Read Celery's configuration before touching Django's: Celery loads it once, lazily, on first access.
    saved = app.conf.broker_write_url, app.conf.broker_transport_options
    settings.CELERY_BROKER_URL = redis_server.url
    app.conf.broker_write_url = redis_server.url
    app.conf.broker_transport_options = {"socket_connect_timeout": 2.0, "socket_timeout": 5.0}
    _reset_publishing(app)
    try:
        yield redis_server
    finally:
        app.conf.broker_write_url, app.conf.broker_transport_options = saved
        _reset_publishing(app)


@pytest.fixture
def live_server_url(tmp_path: Path) -> Iterator[str]:
    """gunicorn, the production server, on the test database (committed rows are visible to it)."""
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("wb")
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    proc = spawn([gunicorn, "advisor.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2", "--timeout", "60"], log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30  # a readiness poll: fails only if gunicorn never answers
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v1/schema/", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "gunicorn.log").read_text()) from None
                time.sleep(0.2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
