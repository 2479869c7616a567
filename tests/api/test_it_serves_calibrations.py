"""POST/GET calibrations and cancel: validation, ownership, filters, throttling, idempotency.

These commit for real (transaction=True): a job is published to the broker when its transaction commits, as
in production, so a 202 here means the message was handed to the configured broker (the embedded file-system
one by default, Redis when CELERY_BROKER_URL says so: `make test` runs them on both)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from kombu.exceptions import ChannelError
from rest_framework.test import APIClient

from advisor.celery import app
from advisor.models import CalibrationJob, Device, Recommendation

pytestmark = [pytest.mark.postgres_redis, pytest.mark.django_db(transaction=True)]

URL = "/api/v1/calibrations/"


def _request(rec: Recommendation, dev: Device, **changes: Any) -> dict[str, Any]:
    return {
        "recommendation": rec.pk,
        "candidate": 0,
        "device": dev.pk,
        "batch_sizes": [16],
        "threads": [1],
    } | changes


def _messages_for(queue: str) -> int:
    """Messages waiting in one queue, asked of the configured broker itself (a passive declare counts them on
    the file-system transport and on Redis alike); a queue nothing was sent to yet holds none."""
    with app.connection_for_read() as connection:
        try:
            return int(connection.default_channel.queue_declare(queue=queue, passive=True).message_count)
        except ChannelError:  # NOT_FOUND: no message has created it
            return 0


@pytest.fixture(autouse=True)
def _empty_queue(device: Device) -> Any:
    """Leave no message behind for a worker a later test starts on the same broker (Redis outlives a test)."""
    yield
    with app.connection_for_write() as connection, contextlib.suppress(ChannelError):
        connection.default_channel.queue_purge(device.queue)


def test_it_queues_a_calibration_on_the_devices_queue(
    api: APIClient, rec: Recommendation, device: Device
) -> None:
    before = _messages_for(device.queue)
    response = api.post(URL, _request(rec, device), format="json")
    assert response.status_code == 202, response.content
    job = response.json()
    assert response["Location"] == f"{URL}{job['id']}/"
    assert (job["status"], job["progress"], job["results"], job["sent"]) == ("queued", 0.0, [], True)
    assert (job["recommendation"], job["candidate"], job["device"]) == (rec.pk, 0, device.pk)
    assert job["batch_sizes"] == [16] and job["threads"] == [1]
    assert CalibrationJob.objects.get(pk=job["id"]).sent_at is not None
    assert _messages_for(device.queue) == before + 1


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"device": "no-such-device"}, "device"),
        ({"recommendation": 10**9}, "recommendation"),
        ({"recommendation": 10**30}, "recommendation"),
        ({"recommendation": "seven"}, "recommendation"),
        ({"candidate": 99}, "candidate"),
        ({"candidate": -1}, "candidate"),
        ({"batch_sizes": [0]}, "batch_sizes"),
        ({"batch_sizes": [10**9]}, "batch_sizes"),
        ({"batch_sizes": "16"}, "batch_sizes"),
        ({"threads": [64]}, "threads"),
        ({"threads": [1.5]}, "threads"),
        ({"time_limit_seconds": 10**6}, "time_limit_seconds"),
        ({"time_limit_seconds": 0}, "time_limit_seconds"),
        ({"device": "a\x00b"}, "device"),
        ({"data_parallel": [0]}, "data_parallel"),
        ({"data_parallel": [3]}, "data_parallel"),  # the device has 2 cores
        ({"data_parallel": "2"}, "data_parallel"),
    ],
)
def test_it_refuses_a_bad_calibration_request_naming_the_field(
    api: APIClient, rec: Recommendation, device: Device, changes: dict[str, Any], field: str
) -> None:
    response = api.post(URL, _request(rec, device, **changes), format="json")
    assert response.status_code == 400, response.content
    assert field in response.json() and all(response.json()[field])
    assert not CalibrationJob.objects.exists()


def test_it_queues_a_data_parallel_calibration(api: APIClient, rec: Recommendation, device: Device) -> None:
    response = api.post(URL, _request(rec, device, data_parallel=[2, 1, 2]), format="json")
    assert response.status_code == 202, response.content
    assert response.json()["data_parallel"] == [1, 2]
    assert api.post(URL, _request(rec, device), format="json").json()["data_parallel"] == []


def test_it_refuses_a_missing_field_and_a_non_object(
    api: APIClient, rec: Recommendation, device: Device
) -> None:
    body = _request(rec, device)
    del body["device"]
    assert "device" in api.post(URL, body, format="json").json()
    assert api.post(URL, [1], format="json").status_code == 400


def test_it_refuses_an_offline_device(api: APIClient, rec: Recommendation, offline_device: Device) -> None:
    response = api.post(URL, _request(rec, offline_device), format="json")
    assert response.status_code == 400
    assert "offline" in response.json()["device"][0]


def test_it_refuses_someone_elses_recommendation(
    api: APIClient, others_rec: Recommendation, device: Device
) -> None:
    response = api.post(URL, _request(others_rec, device), format="json")
    assert response.status_code == 400 and "recommendation" in response.json()


def test_it_shows_a_job_to_its_owner_and_staff_only(
    api: APIClient, other_api: APIClient, staff_api: APIClient, rec: Recommendation, device: Device
) -> None:
    job_id = api.post(URL, _request(rec, device), format="json").json()["id"]
    assert api.get(f"{URL}{job_id}/").json()["id"] == job_id
    assert other_api.get(f"{URL}{job_id}/").status_code == 404
    assert other_api.post(f"{URL}{job_id}/cancel/").status_code == 404
    assert staff_api.get(f"{URL}{job_id}/").status_code == 200
    assert api.get(f"{URL}{'9' * 30}/").status_code == 404


def test_it_lists_my_jobs_filtered_by_status(
    api: APIClient, other_api: APIClient, rec: Recommendation, others_rec: Recommendation, device: Device
) -> None:
    ids = [api.post(URL, _request(rec, device), format="json").json()["id"] for _ in range(3)]
    other_api.post(URL, _request(others_rec, device), format="json")
    CalibrationJob.objects.filter(pk=ids[0]).update(status="succeeded")
    CalibrationJob.objects.filter(pk=ids[1]).update(status="running")

    def listed(**params: Any) -> list[int]:
        response = api.get(URL, params)
        assert response.status_code == 200
        return [job["id"] for job in response.json()["results"]]

    assert listed() == ids[::-1]
    assert listed(status="succeeded") == [ids[0]]
    assert listed(status="queued,running") == [ids[2], ids[1]]
    assert listed(recommendation=rec.pk, status="queued") == [ids[2]]
    assert listed(recommendation=others_rec.pk) == []


@pytest.mark.parametrize(
    "params", [{"status": "done"}, {"status": ","}, {"recommendation": "x"}, {"recommendation": "9" * 30}]
)
def test_it_refuses_unknown_filters_with_400(api: APIClient, params: dict[str, str]) -> None:
    response = api.get(URL, params)
    assert response.status_code == 400
    assert set(response.json()) == set(params)


def test_it_cancels_a_queued_job_and_refuses_a_second_cancel(
    api: APIClient, rec: Recommendation, device: Device
) -> None:
    job_id = api.post(URL, _request(rec, device), format="json").json()["id"]
    first = api.post(f"{URL}{job_id}/cancel/")
    assert first.status_code == 200 and first.json()["status"] == "cancelled"
    second = api.post(f"{URL}{job_id}/cancel/")
    assert second.status_code == 409
    assert second.json()["status"] == "cancelled" and "already cancelled" in second.json()["detail"]


@pytest.mark.parametrize("status", ["succeeded", "failed"])
def test_it_refuses_to_cancel_a_finished_job(
    api: APIClient, rec: Recommendation, device: Device, status: str
) -> None:
    job_id = api.post(URL, _request(rec, device), format="json").json()["id"]
    CalibrationJob.objects.filter(pk=job_id).update(status=status)
    response = api.post(f"{URL}{job_id}/cancel/")
    assert response.status_code == 409 and response.json()["status"] == status


def test_it_asks_a_running_job_to_stop(api: APIClient, rec: Recommendation, device: Device) -> None:
    job_id = api.post(URL, _request(rec, device), format="json").json()["id"]
    CalibrationJob.objects.filter(pk=job_id).update(status="running")
    response = api.post(f"{URL}{job_id}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "running" and response.json()["cancel_requested"] is True


def test_it_throttles_submissions_per_user(
    api: APIClient,
    other_api: APIClient,
    rec: Recommendation,
    others_rec: Recommendation,
    device: Device,
    settings: Any,
) -> None:
    settings.CALIBRATION_THROTTLE_RATE = "2/minute"
    codes = [api.post(URL, _request(rec, device), format="json").status_code for _ in range(3)]
    assert codes == [202, 202, 429]
    refused = api.post(URL, _request(rec, device), format="json")
    assert refused.status_code == 429
    assert "too many calibrations" in refused.json()["detail"] and int(refused["Retry-After"]) > 0
    assert CalibrationJob.objects.filter(owner=rec.owner).count() == 2
    # Another user's budget is their own; reading is not throttled.
    assert other_api.post(URL, _request(others_rec, device), format="json").status_code == 202
    assert api.get(URL).status_code == 200


def test_it_returns_the_same_job_for_a_retried_idempotency_key(
    api: APIClient, other_api: APIClient, rec: Recommendation, others_rec: Recommendation, device: Device
) -> None:
    before = _messages_for(device.queue)
    first = api.post(URL, _request(rec, device), format="json", HTTP_IDEMPOTENCY_KEY="run-42")
    again = api.post(URL, _request(rec, device), format="json", HTTP_IDEMPOTENCY_KEY="run-42")
    assert first.status_code == again.status_code == 202
    assert again.json()["id"] == first.json()["id"] and again["Idempotent-Replayed"] == "true"
    assert _messages_for(device.queue) == before + 1
    assert CalibrationJob.objects.count() == 1
    # The key is per user, and a different key is a different job.
    theirs = other_api.post(URL, _request(others_rec, device), format="json", HTTP_IDEMPOTENCY_KEY="run-42")
    other = api.post(URL, _request(rec, device), format="json", HTTP_IDEMPOTENCY_KEY="run-43")
    assert len({first.json()["id"], theirs.json()["id"], other.json()["id"]}) == 3


def test_it_refuses_a_reused_key_with_a_different_request(
    api: APIClient, rec: Recommendation, device: Device
) -> None:
    api.post(URL, _request(rec, device), format="json", HTTP_IDEMPOTENCY_KEY="k1")
    response = api.post(
        URL, _request(rec, device, batch_sizes=[32]), format="json", HTTP_IDEMPOTENCY_KEY="k1"
    )
    assert response.status_code == 409 and "different request" in response.json()["detail"]
    assert CalibrationJob.objects.count() == 1


@pytest.mark.parametrize("key", ["x" * 201, "tab\there"])
def test_it_refuses_an_unusable_idempotency_key(
    api: APIClient, rec: Recommendation, device: Device, key: str
) -> None:
    response = api.post(URL, _request(rec, device), format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400 and "Idempotency-Key" in response.json()
    assert not CalibrationJob.objects.exists()
