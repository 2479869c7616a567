"""POST calibrations/ with `devices`: one data-parallel calibration spread over several hosts' devices.

Validation, the jobs it queues (one per device, on that device's queue), what GET shows of the
participants, and cancel stopping every participant. Running one for real: tests/hosts."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from advisor import jobs, services, workers
from advisor.models import CalibrationJob, Device, Recommendation
from tests.api.conftest import RedisServer
from tests.api.test_it_serves_calibrations import URL, _messages_for

pytestmark = pytest.mark.django_db(transaction=True)


def _register(host: str, kind: str = "cpu") -> Device:
    (row,) = workers.register_devices(
        host=host,
        worker=f"{kind}0@{host}",
        devices=[{"kind": kind, "index": 0, "name": f"{host} {kind}", "cores": 2, "threads": 2}],
    )
    return row


@pytest.fixture
def pair(device: Device) -> list[Device]:
    """Two online CPU devices, each on a host of its own."""
    return [device, _register("apitest2")]


def _spread(rec: Recommendation, pair: list[Device], **changes: Any) -> dict[str, Any]:
    return {"recommendation": rec.pk, "candidate": 0, "devices": [d.pk for d in pair]} | changes


def test_it_queues_one_job_per_device_and_shows_the_participants(
    api: APIClient, rec: Recommendation, pair: list[Device]
) -> None:
    before = [_messages_for(d.queue) for d in pair]
    response = api.post(URL, _spread(rec, pair, time_limit_seconds=60), format="json")
    assert response.status_code == 202, response.content
    first = response.json()
    assert response["Location"] == f"{URL}{first['id']}/"
    assert (first["device"], first["status"], first["sent"]) == (pair[0].pk, "queued", True)
    spread = first["spread"]
    assert (spread["rank"], spread["world"], spread["devices"]) == (0, 2, [d.pk for d in pair])
    assert spread["jobs"][0] == first["id"] and len(spread["jobs"]) == 2
    second = api.get(f"{URL}{spread['jobs'][1]}/").json()
    assert second["device"] == pair[1].pk and second["time_limit_seconds"] == 60
    assert second["spread"] == {**spread, "rank": 1}
    assert [_messages_for(d.queue) for d in pair] == [n + 1 for n in before]


def test_it_shows_no_spread_for_a_job_of_one_device(
    api: APIClient, rec: Recommendation, device: Device
) -> None:
    response = api.post(URL, {"recommendation": rec.pk, "device": device.pk}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["spread"] is None


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"devices": ["apitest-cpu0", "no-such-device"]}, "devices"),  # unknown
        ({"devices": ["gone-cpu0", "apitest-cpu0"]}, "devices"),  # offline
        ({"devices": ["apitest-cpu0", "gpuhost-cuda0"]}, "devices"),  # different kinds
        ({"devices": ["apitest-cpu0", "apitest-cpu0"]}, "devices"),  # one device twice
        ({"devices": ["apitest-cpu0", "apitest-cpu1"]}, "devices"),  # two devices on one host
        ({"devices": ["apitest-cpu0"]}, "devices"),  # one device is no spread
        ({"devices": []}, "devices"),
        ({"devices": "apitest-cpu0"}, "devices"),
        ({"device": "apitest-cpu0"}, "device"),  # device or devices, not both
        ({"batch_sizes": [16]}, "batch_sizes"),
        ({"threads": [1]}, "threads"),
        ({"data_parallel": [1, 2]}, "data_parallel"),
        ({"candidate": 99}, "candidate"),
        ({"time_limit_seconds": 10**6}, "time_limit_seconds"),
        ({"devices": None}, "devices"),
    ],
)
def test_it_refuses_a_bad_spread_request_naming_the_field(
    api: APIClient,
    rec: Recommendation,
    pair: list[Device],
    offline_device: Device,
    changes: dict[str, Any],
    field: str,
) -> None:
    _register("gpuhost", kind="cuda")
    workers.register_devices(
        host="apitest",
        worker="cpu1@apitest",
        devices=[{"kind": "cpu", "index": 1, "name": "Second CPU", "cores": 2, "threads": 2}],
    )
    response = api.post(URL, _spread(rec, pair, **changes), format="json")
    assert response.status_code == 400, response.content
    assert field in response.json() and all(response.json()[field])
    assert not CalibrationJob.objects.exists()


def test_it_refuses_neither_device_nor_devices(api: APIClient, rec: Recommendation) -> None:
    response = api.post(URL, {"recommendation": rec.pk}, format="json")
    assert response.status_code == 400 and response.json()["device"]


def test_it_refuses_an_idempotency_key_with_devices(
    api: APIClient, rec: Recommendation, pair: list[Device]
) -> None:
    response = api.post(URL, _spread(rec, pair), format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert response.status_code == 400 and response.json()["Idempotency-Key"]
    assert not CalibrationJob.objects.exists()


@pytest.mark.parametrize("through", [0, 1])
def test_it_cancels_every_participant_through_any_of_them(
    api: APIClient, rec: Recommendation, pair: list[Device], through: int
) -> None:
    jobs = api.post(URL, _spread(rec, pair), format="json").json()["spread"]["jobs"]
    response = api.post(f"{URL}{jobs[through]}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert [api.get(f"{URL}{j}/").json()["status"] for j in jobs] == ["cancelled", "cancelled"]


@pytest.mark.slow
def test_it_answers_503_and_keeps_every_participant_while_the_broker_is_down(
    api: APIClient, redis_broker: RedisServer, rec: Recommendation, pair: list[Device]
) -> None:
    api.post(URL, {"recommendation": rec.pk, "device": pair[0].pk}, format="json")  # a pooled connection
    redis_broker.stop()
    refused = api.post(URL, _spread(rec, pair), format="json")
    assert refused.status_code == 503, refused.content
    assert refused["Retry-After"] and "broker is unreachable" in refused.json()["detail"]
    ids = refused.json()["job"]["spread"]["jobs"]
    kept = CalibrationJob.objects.filter(pk__in=ids)
    assert [(j.status, j.sent_at) for j in kept] == [("queued", None), ("queued", None)]

    redis_broker.start()
    queues = [d.queue for d in pair]
    assert jobs.resend_unsent(services.CALIBRATIONS, queues=queues) == 2
    assert [int(redis_broker.client().llen(q)) for q in queues] == [1, 1]
