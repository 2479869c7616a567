"""The broker-down path against a real Redis that the test stops and starts again (no mocks).

Chosen behaviour: a submission the broker refuses is kept, not rolled back. The API answers 503 with the job
(status queued, sent false); the job waits in the outbox (sent_at NULL) and is sent when the broker is back,
by a worker's heartbeat (jobs.resend_unsent) or by the client retrying with the same Idempotency-Key."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from advisor import jobs, services
from advisor.models import CalibrationJob, Device, Recommendation
from tests.api.conftest import RedisServer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/calibrations/"


def _request(rec: Recommendation, dev: Device) -> dict[str, Any]:
    return {"recommendation": rec.pk, "candidate": 0, "device": dev.pk, "batch_sizes": [16], "threads": [1]}


def _waiting(redis: RedisServer, dev: Device) -> int:
    """Messages in the device's queue: kombu's Redis transport keeps each queue as a list under its name."""
    return int(redis.client().llen(dev.queue))


def test_it_publishes_to_the_configured_redis(
    api: APIClient, redis_broker: RedisServer, rec: Recommendation, device: Device
) -> None:
    response = api.post(URL, _request(rec, device), format="json")
    assert response.status_code == 202 and response.json()["sent"] is True
    assert _waiting(redis_broker, device) == 1


def test_it_answers_503_keeps_the_job_and_sends_it_when_the_broker_is_back(
    api: APIClient, redis_broker: RedisServer, rec: Recommendation, device: Device
) -> None:
    api.post(URL, _request(rec, device), format="json")  # a pooled connection exists before the outage
    redis_broker.stop()

    refused = api.post(URL, _request(rec, device), format="json")
    assert refused.status_code == 503, refused.content
    body = refused.json()
    assert "broker is unreachable" in body["detail"] and refused["Retry-After"]
    assert body["job"]["status"] == "queued" and body["job"]["sent"] is False
    job = CalibrationJob.objects.get(pk=body["job"]["id"])
    assert job.status == "queued" and job.sent_at is None
    # A second submission while it is down finds no pooled connection to reuse: it must also answer, not hang.
    assert api.post(URL, _request(rec, device), format="json").status_code == 503

    redis_broker.start()  # same port, empty: whatever arrives now was sent after the outage
    assert _waiting(redis_broker, device) == 0
    assert jobs.resend_unsent(services.CALIBRATIONS, queues=[device.queue]) == 2
    assert _waiting(redis_broker, device) == 2
    job.refresh_from_db()
    assert job.sent_at is not None and job.status == "queued"
    assert api.get(f"{URL}{job.pk}/").json()["sent"] is True


def test_it_sends_a_kept_job_when_the_client_retries_with_its_key(
    api: APIClient, redis_broker: RedisServer, rec: Recommendation, device: Device
) -> None:
    redis_broker.stop()
    refused = api.post(URL, _request(rec, device), format="json", HTTP_IDEMPOTENCY_KEY="nightly-1")
    assert refused.status_code == 503
    redis_broker.start()

    retried = api.post(URL, _request(rec, device), format="json", HTTP_IDEMPOTENCY_KEY="nightly-1")
    assert retried.status_code == 202, retried.content
    assert retried.json()["id"] == refused.json()["job"]["id"] and retried.json()["sent"] is True
    assert _waiting(redis_broker, device) == 1
    assert CalibrationJob.objects.count() == 1
