"""GET /api/v1/metrics/: Prometheus's text format, parsed with prometheus_client's own parser, the values
checked against the jobs this test made; staff only (token or session), like the rest of the API."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.test import APIClient

from advisor.models import CalibrationJob, Device, Recommendation

pytestmark = pytest.mark.django_db

URL = "/api/v1/metrics/"


def _samples(client: APIClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get(URL)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_it_counts_jobs_queues_durations_heartbeats_and_refusals(
    staff_api: APIClient, api: APIClient, user: Any, rec: Recommendation, device: Device, settings: Any
) -> None:
    now = timezone.now()
    made = {"queued": 3, "running": 1, "succeeded": 2, "failed": 1}
    for status, n in made.items():
        for _ in range(n):
            job = CalibrationJob.objects.create(
                owner=user, recommendation=rec, device=device, time_limit_seconds=60
            )
            fields: dict[str, Any] = {"status": status}
            if status != "queued":
                fields |= {
                    "started_at": now - timedelta(seconds=40),
                    "created_at": now - timedelta(seconds=50),
                }
            if status in ("succeeded", "failed"):
                fields["finished_at"] = now - timedelta(seconds=10)  # 30 s each
            CalibrationJob.objects.filter(pk=job.pk).update(**fields)
    CalibrationJob.objects.filter(status="queued").update(created_at=now - timedelta(seconds=100))
    Device.objects.filter(pk=device.pk).update(last_seen=now - timedelta(seconds=7))
    settings.JOBS_QUEUED_PER_USER = 3  # the next submission is refused for the queue
    body = {"recommendation": rec.pk, "device": device.pk, "batch_sizes": [16], "threads": [1]}
    assert api.post("/api/v1/calibrations/", body, format="json").status_code == 400

    found = _samples(staff_api)
    for status, n in made.items():
        assert found["advisor_jobs", (("kind", "calibration"), ("state", status))] == n
    assert found["advisor_jobs", (("kind", "calibration"), ("state", "cancelled"))] == 0
    assert found["advisor_jobs", (("kind", "probe"), ("state", "queued"))] == 0
    assert found["advisor_queue_length", (("device", device.pk),)] == 3
    assert found["advisor_queue_oldest_wait_seconds", (("device", device.pk),)] == pytest.approx(100, abs=5)
    # three finished jobs of 30 s: none in the 15 s bucket, all in the 30 s one
    assert found["advisor_job_duration_seconds_count", (("kind", "calibration"),)] == 3
    assert found["advisor_job_duration_seconds_sum", (("kind", "calibration"),)] == pytest.approx(90)
    assert found["advisor_job_duration_seconds_bucket", (("kind", "calibration"), ("le", "15.0"))] == 0
    assert found["advisor_job_duration_seconds_bucket", (("kind", "calibration"), ("le", "30.0"))] == 3
    # four started jobs, each after 10 s in the queue
    assert found["advisor_job_wait_seconds_count", (("kind", "calibration"),)] == 4
    assert found["advisor_job_wait_seconds_sum", (("kind", "calibration"),)] == pytest.approx(40)
    assert found["advisor_worker_heartbeat_age_seconds", (("device", device.pk),)] == pytest.approx(7, abs=5)
    assert found["advisor_device_draining", (("device", device.pk),)] == 0
    assert found["advisor_refusals_total", (("kind", "calibration"), ("reason", "queue"))] == 1


def test_it_is_for_staff_with_a_token_or_a_session(api: APIClient, django_user_model: Any) -> None:
    assert APIClient().get(URL).status_code == 401
    assert api.get(URL).status_code == 403  # a user who is not staff
    staff = django_user_model.objects.create_user(username="ops", password="x" * 12, is_staff=True)
    session = APIClient()
    session.force_login(staff)
    assert session.get(URL).status_code == 200
