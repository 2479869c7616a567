"""Fixtures for the pages: a logged-in client, a recommendation, an online device, a finished job."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import timezone

from advisor import engine, services
from advisor.calibration.findings import allocator_finding
from advisor.calibration.summary import sweep_summary
from advisor.models import CalibrationJob, Device, MeasuredConfiguration
from tests.conftest import cpu_device


@pytest.fixture
def page(chromium_path: str, live_server: Any, user: Any, monkeypatch: Any) -> Iterator[Any]:
    """A headless Chromium tab, logged in as `user`. Playwright's sync API runs an event loop in the
    test's thread, so Django's async-safety check would refuse the ORM calls a test makes between browser
    steps; only the tests that use a page turn it off."""
    from tests.web.browser import open_page

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with open_page(chromium_path, live_server.url) as tab:
        yield tab


@pytest.fixture
def rec(user: Any, tabular_spec: dict[str, Any]) -> Any:
    return services.advise(owner=user, spec=tabular_spec)


@pytest.fixture
def device(db: None) -> Device:
    return cpu_device("webtest", memory_bytes=8 * 2**30)


def finished_job(rec: Any, device: Device, *, status: str = CalibrationJob.SUCCEEDED) -> CalibrationJob:
    """A job as the worker leaves it: measurements saved, then the measured estimate (written directly: the
    web pages only read these rows)."""
    from advisor import engine

    job = CalibrationJob.objects.create(
        owner=rec.owner,
        recommendation=rec,
        candidate=0,
        device=device,
        batch_sizes=[32, 64],
        threads=[1, 2],
        time_limit_seconds=60,
        status=CalibrationJob.RUNNING,
        started_at=timezone.now(),
        progress=0.5,
        step="batch 64, 1 thread",
    )
    for batch, threads, seconds in ((32, 1, 0.004), (32, 2, 0.003), (64, 1, 0.007), (64, 2, 0.005)):
        MeasuredConfiguration.objects.create(
            job=job,
            batch_size=batch,
            threads=threads,
            seconds_per_batch=seconds,
            result={
                "seconds_per_batch": seconds,
                "iqr": seconds / 20,
                "iterations": 50,
                "examples_per_second": batch / seconds,
                "peak_memory_bytes": 10_000_000,
                "live_tensor_peak_bytes": 9_500_000,
                "achieved_flops": 1e9,
                "device": "cpu",
                "threads": threads,
            },
        )
    MeasuredConfiguration.objects.create(
        job=job, batch_size=4096, threads=2, status="oom", result={"status": "oom", "message": "does not fit"}
    )
    if status != CalibrationJob.RUNNING:
        estimate = engine.measured_estimate(rec.result, 0, seconds_per_batch=0.003, batch_size=32)
        CalibrationJob.objects.filter(pk=job.pk).update(
            status=status,
            progress=1.0,
            step="done",
            finished_at=timezone.now(),
            estimate={**estimate, "measured_at": {"batch_size": 32, "threads": 2, "device": device.id}}
            if status == CalibrationJob.SUCCEEDED
            else None,
            error="" if status == CalibrationJob.SUCCEEDED else "calibration process died with signal 9",
        )
    job.refresh_from_db()
    return job


def tuned_job(rec: Any, device: Device) -> CalibrationJob:
    """A finished CPU sweep at batch 64 on 1 and 2 threads, the fastest re-measured with the tuned allocator
    (its finding among the reasons), every figure a CPU row has: written as a worker leaves it."""
    rows = [(64, 1, "default", 0.2), (64, 2, "default", 0.0997), (64, 2, "tuned", 0.0853)]
    job = CalibrationJob.objects.create(
        owner=rec.owner, recommendation=rec, device=device, batch_sizes=[], threads=[],
        time_limit_seconds=60, status=CalibrationJob.SUCCEEDED, progress=1.0, step="done",
        started_at=timezone.now(), finished_at=timezone.now(),
    )  # fmt: skip
    events = []
    for batch, threads, allocator, seconds in rows:
        result = {
            "status": "ok", "seconds_per_batch": seconds, "examples_per_second": batch / seconds,
            "iterations": 20, "iqr": seconds / 20, "peak_memory_bytes": 61_200_000,
            "live_tensor_peak_bytes": 23_100_000, "achieved_flops": 2.4e9, "device": "cpu",
            "threads": threads, "user_seconds_per_step": seconds * threads * 0.7,
            "system_seconds_per_step": seconds * threads * 0.3,
            "minor_faults_per_step": 900 if allocator == "default" else 40,
        }  # fmt: skip
        MeasuredConfiguration.objects.create(
            job=job, batch_size=batch, threads=threads, allocator=allocator, seconds_per_batch=seconds,
            result=result,
        )  # fmt: skip
        events.append({"batch_size": batch, "threads": threads, "allocator": allocator, "result": result})
    estimate = engine.measured_estimate(rec.result, 0, seconds_per_batch=0.0853, batch_size=64)
    at = {"batch_size": 64, "threads": 2, "allocator": "tuned", "device": device.id}
    job.estimate = {**estimate, "measured_at": at}
    job.summary = sweep_summary(events, physical_cores=2)
    job.summary["reasons"].append(allocator_finding(events, 0.3, 0.1)["reason"])
    job.save()
    return job
