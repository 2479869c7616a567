"""Telling a job's owner that it finished or failed: a POST of JSON to their webhook and/or an email through
Django's email backend, as they chose on the account page (advisor.models.Notifications).

Delivery runs in a daemon thread with a timeout (NOTIFY_TIMEOUT_SECONDS), so a slow or dead hook never holds
the worker that finished the job; a failure is logged, never raised."""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

from advisor.models import DeviceJob, Notifications

log = logging.getLogger(__name__)


def job_finished(job: DeviceJob, *, status: str, error: str) -> threading.Thread | None:
    """Start telling the owner of `job` (its row as it ended: `status`, `error`); the delivery's thread, or
    None when they asked for nothing."""
    chosen = Notifications.objects.filter(user_id=job.owner_id).select_related("user").first()
    if chosen is None or not (chosen.webhook_url or (chosen.email and chosen.user.email)):
        return None
    kind = type(job).__name__.removesuffix("Job").lower()  # "calibration", "probe": its page's URL name
    payload = {
        "event": "job.finished",
        "kind": kind,
        "id": job.pk,
        "status": status,
        "error": error,
        "device": job.device_id,
        "url": reverse(kind, args=[job.pk]),
        "api": f"/api/v1/{kind}s/{job.pk}/",
    }
    email = chosen.user.email if chosen.email else ""
    thread = threading.Thread(
        target=deliver, args=(payload, chosen.webhook_url, email), name=f"notify-{kind}-{job.pk}", daemon=True
    )
    thread.start()
    return thread


def deliver(payload: dict[str, Any], webhook_url: str, email: str) -> None:
    timeout = float(settings.NOTIFY_TIMEOUT_SECONDS)
    if webhook_url:
        request = urllib.request.Request(
            webhook_url,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "User-Agent": "network-selection-advisor"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:  # http(s) only: the form checks
                answer.read(1024)
        except Exception as exc:  # a hook that is down, slow or wrong must not fail the job
            log.warning("webhook %s for %s %s failed: %s", webhook_url, payload["kind"], payload["id"], exc)
    if email:
        subject = f"[advisor] {payload['kind']} #{payload['id']} {payload['status']}"
        body = f"{subject} on {payload['device']}.\n{payload['error']}\n\nSee {payload['url']}\n".replace(
            "\n\n\n", "\n\n"
        )
        try:
            send_mail(subject, body, None, [email], fail_silently=False)
        except Exception as exc:
            log.warning("email to %s for %s %s failed: %s", email, payload["kind"], payload["id"], exc)
