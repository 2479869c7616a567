"""POST /calibrations/{id}/again/: a calibration that measured unreliably says why on its page and offers
the same calibration again, queued through the submit service (once per job: a second click opens the same
one)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from advisor import running
from advisor.calibration import sweep_summary
from advisor.models import CalibrationJob, Device
from tests.web.conftest import finished_job

pytestmark = pytest.mark.django_db

REASON = {
    "code": "cpu_share",
    "text": "the process ran 41% of the timed seconds (under 85%: it waited for a CPU)",
}


def _contended(rec: Any, device: Device) -> CalibrationJob:
    """A finished job whose every configuration the worker found unreliable, concluded by its own code."""
    job = finished_job(rec, device, status=CalibrationJob.RUNNING)
    events = []
    for m in job.measurements.filter(status="ok"):
        m.result = {**m.result, "status": "ok", "unreliable": True, "unreliable_reasons": [REASON]}
        m.save(update_fields=["result"])
        events.append(
            {"batch_size": m.batch_size, "threads": m.threads, "allocator": m.allocator, "result": m.result}
        )
    running.conclude(
        job, None, {"status": "succeeded", "error": None, **sweep_summary(events, physical_cores=2)}
    )
    job.refresh_from_db()
    return job


def test_it_says_why_no_time_was_measured_and_queues_the_same_calibration(
    client_for: Client, rec: Any, device: Device
) -> None:
    job = _contended(rec, device)
    assert job.status == CalibrationJob.SUCCEEDED and job.estimate is None
    html = client_for.get(f"/calibrations/{job.pk}/").content.decode()
    assert 'id="withheld"' in html and "every configuration this calibration measured was unreliable" in html
    assert html.count('<strong class="unreliable">unreliable</strong>') == 4
    assert "it waited for a CPU" in html
    assert f'action="/calibrations/{job.pk}/again/"' in html and "Measure again</button>" in html
    response = client_for.post(f"/calibrations/{job.pk}/again/")
    again = CalibrationJob.objects.exclude(pk=job.pk).get()
    assert response.status_code == 302 and response["Location"] == f"/calibrations/{again.pk}/"
    assert again.status == CalibrationJob.QUEUED
    assert (again.recommendation_id, again.candidate, again.device_id) == (rec.pk, 0, device.pk)
    assert (again.batch_sizes, again.threads, again.time_limit_seconds) == ([32, 64], [1, 2], 60)
    client_for.post(f"/calibrations/{job.pk}/again/")  # a second click: the same new job
    assert CalibrationJob.objects.count() == 2


def test_a_reliable_calibration_offers_no_measure_again(client_for: Client, rec: Any, device: Device) -> None:
    job = finished_job(rec, device)
    html = client_for.get(f"/calibrations/{job.pk}/").content.decode()
    assert "Measure again" not in html and 'id="withheld"' not in html and "unreliable</strong>" not in html


def test_it_refuses_to_measure_again_on_an_offline_device_saying_why(
    client_for: Client, rec: Any, device: Device
) -> None:
    job = _contended(rec, device)
    Device.objects.filter(pk=device.pk).update(last_seen=timezone.now() - timedelta(hours=1))
    response = client_for.post(f"/calibrations/{job.pk}/again/")
    assert response.status_code == 400
    assert "Not queued: device" in response.content.decode() and "is offline" in response.content.decode()
    assert CalibrationJob.objects.count() == 1
