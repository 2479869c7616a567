"""A finished or failed job tells its owner: a webhook (a local HTTP server here) gets JSON, Django's email
backend (locmem) an email; a slow hook never holds the worker; the account page takes only http(s) URLs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from advisor import jobs, notify
from advisor.models import CalibrationJob, Notifications, Recommendation
from tests.conftest import cpu_device

pytestmark = pytest.mark.django_db


class Hook:
    """A webhook receiver on 127.0.0.1 that keeps what it was sent; `hold` makes it answer only when set."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.hold = threading.Event()
        self.hold.set()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook.received.append({"body": json.loads(body), "type": self.headers["Content-Type"]})
                hook.hold.wait(10)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def hook() -> Iterator[Hook]:
    receiver = Hook()
    yield receiver
    receiver.hold.set()
    receiver.server.shutdown()


@pytest.fixture
def running_job(user: Any) -> CalibrationJob:
    rec = Recommendation.objects.create(owner=user, spec={}, result={"candidates": []})
    return CalibrationJob.objects.create(
        owner=user,
        recommendation=rec,
        device=cpu_device("notify"),
        time_limit_seconds=60,
        status="running",
        started_at=timezone.now(),
    )


def _finish(job: CalibrationJob, status: str, capture: Any) -> threading.Thread | None:
    """jobs.finish as the worker calls it, its on-commit callbacks run; the delivery's thread, to join."""
    started: list[threading.Thread | None] = []
    real = notify.job_finished

    def keep(*args: Any, **kwargs: Any) -> threading.Thread | None:
        started.append(real(*args, **kwargs))
        return started[-1]

    notify.job_finished = keep
    try:
        with capture(execute=True):
            jobs.finish(job, status=status, error="boom" if status == "failed" else "")
    finally:
        notify.job_finished = real
    return started[0] if started else None


def test_a_webhook_gets_the_finished_job(
    user: Any, running_job: CalibrationJob, hook: Hook, django_capture_on_commit_callbacks: Any
) -> None:
    Notifications.objects.create(user=user, webhook_url=hook.url)
    thread = _finish(running_job, "failed", django_capture_on_commit_callbacks)
    assert thread is not None
    thread.join(10)
    (got,) = hook.received
    assert got["type"] == "application/json"
    assert got["body"] | {"url": ""} == {
        "event": "job.finished",
        "kind": "calibration",
        "id": running_job.pk,
        "status": "failed",
        "error": "boom",
        "device": "notify-cpu0",
        "url": "",
        "api": f"/api/v1/calibrations/{running_job.pk}/",
    }
    assert got["body"]["url"] == f"/calibrations/{running_job.pk}/"


def test_a_slow_hook_does_not_hold_the_worker(
    user: Any, running_job: CalibrationJob, hook: Hook, django_capture_on_commit_callbacks: Any
) -> None:
    Notifications.objects.create(user=user, webhook_url=hook.url)
    hook.hold.clear()  # the hook takes the request and does not answer
    thread = _finish(running_job, "succeeded", django_capture_on_commit_callbacks)
    # finish() has returned while the hook still holds the request
    assert thread is not None and thread.is_alive()
    running_job.refresh_from_db()
    assert running_job.status == "succeeded"
    hook.hold.set()
    thread.join(10)
    assert not thread.is_alive() and len(hook.received) == 1


def test_an_email_goes_through_djangos_backend(
    user: Any, running_job: CalibrationJob, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user.email = "ada@example.org"
    user.save()
    Notifications.objects.create(user=user, email=True)
    thread = _finish(running_job, "succeeded", django_capture_on_commit_callbacks)
    assert thread is not None
    thread.join(10)
    (sent,) = mail.outbox
    assert sent.to == ["ada@example.org"]
    assert sent.subject == f"[advisor] calibration #{running_job.pk} succeeded"


def test_nobody_who_asked_for_nothing_is_told(
    user: Any, running_job: CalibrationJob, django_capture_on_commit_callbacks: Any
) -> None:
    assert _finish(running_job, "succeeded", django_capture_on_commit_callbacks) is None


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("https://hooks.example.org/advisor", 200),
        ("http://127.0.0.1:9000/hook", 200),
        ("", 200),
        ("ftp://example.org/hook", 400),
        ("javascript:alert(1)", 400),
        ("file:///etc/passwd", 400),
        ("not a url", 400),
    ],
)
def test_the_account_page_takes_only_http_urls(user: Any, url: str, status: int) -> None:
    client = Client()
    client.force_login(user)
    assert client.get("/account/notifications/").status_code == 200
    response = client.post("/account/notifications/", {"webhook_url": url, "email": "on"})
    assert response.status_code == status
    stored = Notifications.objects.get(user=user)
    assert stored.webhook_url == (url if status == 200 else "")
    assert stored.email is (status == 200)


@pytest.mark.slow
def test_in_a_browser_the_account_page_refuses_then_keeps_a_webhook(page: Any, user: Any) -> None:
    from tests.web.browser import shoot

    page.goto("/account/token/")
    page.click("a[href='/account/notifications/']")
    page.fill("#id_webhook_url", "ftp://example.org/hook")
    save = "form[action='/account/notifications/'] button[type=submit]"
    page.click(save)
    assert "Enter a valid URL" in page.inner_text("main")
    page.fill("#id_webhook_url", "https://hooks.example.org/advisor")
    page.check("#id_email")
    page.click(save)
    page.wait_for_selector("#saved")
    shoot(page, "notifications")
    stored = Notifications.objects.get(user=user)
    assert (stored.webhook_url, stored.email) == ("https://hooks.example.org/advisor", True)
