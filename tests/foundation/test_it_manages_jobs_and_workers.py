"""Job life cycle without a worker: claims, cancellation, the outbox and orphan recovery."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from advisor import jobs, running, services, workers
from advisor.models import CalibrationJob, Device, Recommendation

pytestmark = pytest.mark.django_db

CANDIDATE = {"family": "ffn", "parameters": 1000, "training": {"batch_size": 32}, "networks": {"model": []}}


@pytest.fixture
def device() -> Device:
    (row,) = workers.register_devices(
        host="box", worker="cpu0@box", devices=[{"kind": "cpu", "index": 0, "name": "Test CPU", "cores": 2}]
    )
    return row


@pytest.fixture
def job(user: Any, device: Device) -> CalibrationJob:
    rec = Recommendation.objects.create(owner=user, spec={}, result={"candidates": [CANDIDATE]})
    return CalibrationJob.objects.create(
        owner=user, recommendation=rec, device=device, time_limit_seconds=60, sent_at=timezone.now()
    )


def test_it_registers_a_device_with_its_own_queue(device: Device) -> None:
    assert device.id == "box-cpu0"
    assert device.queue == "device.box-cpu0"
    assert device.online


def test_it_shows_a_silent_device_offline_without_deleting_it(device: Device) -> None:
    Device.objects.filter(pk=device.pk).update(last_seen=timezone.now() - timedelta(minutes=5))
    device.refresh_from_db()
    assert not device.online
    workers.heartbeat(device_ids=[device.id])
    device.refresh_from_db()
    assert device.online


@pytest.mark.parametrize("status", ["succeeded", "failed", "cancelled", "running"])
def test_it_does_nothing_for_a_job_it_cannot_claim(job: CalibrationJob, status: str) -> None:
    CalibrationJob.objects.filter(pk=job.pk).update(status=status)
    assert running.run_calibration_job(job_id=job.pk) == "skipped"
    job.refresh_from_db()
    assert job.status == status and job.attempts == 0


def test_it_cancels_a_queued_job_at_once(job: CalibrationJob) -> None:
    cancelled = services.cancel_calibration(job=job)
    assert cancelled.status == "cancelled" and cancelled.finished_at is not None
    assert running.run_calibration_job(job_id=job.pk) == "skipped"


def test_it_asks_a_running_job_to_stop(job: CalibrationJob) -> None:
    CalibrationJob.objects.filter(pk=job.pk).update(status="running")
    cancelled = services.cancel_calibration(job=job)
    assert cancelled.status == "running" and cancelled.cancel_requested


def test_it_refuses_to_cancel_a_finished_job(job: CalibrationJob) -> None:
    CalibrationJob.objects.filter(pk=job.pk).update(status="succeeded")
    with pytest.raises(services.JobFinished):
        services.cancel_calibration(job=job)


def test_it_requeues_an_orphan_while_attempts_remain(job: CalibrationJob, device: Device) -> None:
    stale = timezone.now() - timedelta(minutes=2)
    CalibrationJob.objects.filter(pk=job.pk).update(status="running", attempts=1, heartbeat_at=stale)
    assert jobs.reap_orphans(services.CALIBRATIONS, device_ids=[device.id], stale_after=30) == [job.pk]
    job.refresh_from_db()
    assert job.status == "queued" and "re-queued" in job.step


def test_it_fails_an_orphan_with_a_reason_when_attempts_are_spent(
    job: CalibrationJob, device: Device, settings: Any
) -> None:
    settings.CALIBRATION_MAX_ATTEMPTS = 1
    stale = timezone.now() - timedelta(minutes=2)
    CalibrationJob.objects.filter(pk=job.pk).update(status="running", attempts=1, heartbeat_at=stale)
    jobs.reap_orphans(services.CALIBRATIONS, device_ids=[device.id], stale_after=30)
    job.refresh_from_db()
    assert job.status == "failed"
    assert "stopped while this job ran" in job.error and job.finished_at is not None


def test_it_leaves_a_job_with_a_fresh_heartbeat_alone(job: CalibrationJob, device: Device) -> None:
    CalibrationJob.objects.filter(pk=job.pk).update(status="running", attempts=1, heartbeat_at=timezone.now())
    assert jobs.reap_orphans(services.CALIBRATIONS, device_ids=[device.id], stale_after=30) == []


def test_it_keeps_an_unsent_job_queued_for_the_next_heartbeat(job: CalibrationJob, device: Device) -> None:
    CalibrationJob.objects.filter(pk=job.pk).update(sent_at=None)
    assert jobs.resend_unsent(services.CALIBRATIONS, queues=[device.queue]) == 1
    job.refresh_from_db()
    assert job.sent_at is not None and job.options["task_id"]
