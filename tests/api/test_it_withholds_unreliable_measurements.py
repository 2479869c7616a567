"""GET calibrations/{id}/ and recommendations/{id}/ after a sweep that saw contention: each measurement says
whether it is unreliable and why; an unreliable configuration is never the measured time, never a finding
and never a row the device's learned correction learns from."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from advisor import profiles, running, services, timemodels
from advisor.calibration import sweep_summary
from advisor.engine.costmodel import step_cost
from advisor.models import CalibrationJob, Device, Recommendation
from tests.engine.profiles import synthetic_profile

pytestmark = pytest.mark.django_db

CONTENDED = [{"code": "runnable", "text": "more tasks wanted to run than the 2 CPUs in 90% of the samples"}]


def _result(batch: int, threads: int, seconds: float, *, unreliable: bool) -> dict[str, Any]:
    """A configuration as measure() and the sweep's child report it."""
    return {
        "status": "ok",
        "seconds_per_batch": seconds,
        "mean_seconds_per_batch": seconds * 1.4,  # a stall or two
        "trimmed_mean_seconds_per_batch": seconds * 1.02,
        "gather_seconds_per_batch": seconds / 100,
        "examples_per_second": batch / seconds,
        "iterations": 40,
        "iqr": seconds / 10,
        "device": "cpu",
        "threads": threads,
        "noisy": False,
        "unreliable": unreliable,
        "unreliable_reasons": CONTENDED if unreliable else [],
    }


def _swept(rec: Recommendation, device: Device, rows: list[tuple[int, int, float, bool]]) -> CalibrationJob:
    """A job whose child measured `rows` (batch, threads, seconds, unreliable), concluded by the worker's own
    code."""
    job = CalibrationJob.objects.create(
        owner=rec.owner,
        recommendation=rec,
        candidate=0,
        device=device,
        batch_sizes=sorted({r[0] for r in rows}),
        threads=sorted({r[1] for r in rows}),
        time_limit_seconds=60,
        status=CalibrationJob.RUNNING,
        started_at=timezone.now(),
    )
    events = []
    for batch, threads, seconds, unreliable in rows:
        event = {"type": "result", "batch_size": batch, "threads": threads, "allocator": "default"}
        event["result"] = _result(batch, threads, seconds, unreliable=unreliable)
        running.record_result(job=job, event=event)
        events.append(event)
    summary = {"status": "succeeded", "error": None, **sweep_summary(events, physical_cores=2)}
    running.conclude(job, None, summary)
    job.refresh_from_db()
    return job


@pytest.fixture
def batch(rec: Recommendation) -> int:
    """The first candidate's training batch: the batch its measured estimate is made at."""
    return int(rec.result["candidates"][0]["training"]["batch_size"])


def _served(api: APIClient, job: CalibrationJob) -> dict[str, Any]:
    body: dict[str, Any] = api.get(f"/api/v1/calibrations/{job.pk}/").json()
    return body


def test_the_fastest_configuration_is_not_the_headline_when_it_was_contended(
    api: APIClient, rec: Recommendation, device: Device, batch: int
) -> None:
    body = _served(api, _swept(rec, device, [(batch, 1, 0.010, False), (batch, 2, 0.004, True)]))
    assert body["status"] == "succeeded"
    marks = {r["threads"]: (r["unreliable"], r["unreliable_reasons"]) for r in body["results"]}
    assert marks == {1: (False, []), 2: (True, CONTENDED)}
    estimate = body["estimate"]
    assert estimate["measured_at"]["threads"] == 1
    # the trimmed mean step plus gathering: one stall moves the mean 40% here, not this
    assert estimate["seconds_per_batch"] == pytest.approx(0.010 * 1.02 + 0.010 / 100)
    assert estimate["measured_at"]["step"] == "trimmed mean + gathering"
    low, high = estimate["interval"]["seconds_to_train"]
    assert low < estimate["seconds_to_train"] < high
    assert body["summary"]["fastest"]["threads"] == 1
    assert [(u["threads"], u["reasons"]) for u in body["summary"]["unreliable"]] == [(2, CONTENDED)]
    shown = api.get(f"/api/v1/recommendations/{rec.pk}/").json()
    assert shown["candidates"][0]["estimate"]["basis"] == "measured"
    assert shown["hardware_plan"]["threads"] == 1  # the plan follows the reliable measurement only


def test_a_sweep_of_unreliable_configurations_leaves_the_estimate_before_it(
    api: APIClient, rec: Recommendation, device: Device, batch: int
) -> None:
    body = _served(api, _swept(rec, device, [(batch, 1, 0.010, True), (batch, 2, 0.030, True)]))
    assert body["status"] == "succeeded" and body["error"] == ""
    assert body["estimate"] is None
    withheld = body["summary"]["withheld"]
    assert withheld.startswith(
        "No measured time: every configuration this calibration measured was unreliable"
    )
    assert f"Batch {batch}, 2 threads (default allocator): more tasks wanted to run" in withheld
    shown = api.get(f"/api/v1/recommendations/{rec.pk}/").json()
    estimate = shown["candidates"][0]["estimate"]
    assert estimate["basis"] == "catalog" and "interval" in estimate
    assert shown["hardware_plan"]["threads_basis"] == "cores"


def test_the_learned_correction_learns_from_reliable_measurements_only(
    user: Any, device: Device, tabular_spec: dict[str, Any]
) -> None:
    """Four networks measured 1.5x their profiled time, reliably; every configuration measured twice as
    well under contention at 20x. The correction learns the 1.5x from the 24 reliable rows alone."""
    profile = synthetic_profile()
    profiles.store_profile(device=device, profile=profile)
    for inputs in ([16], [300], [40], [120]):
        spec = {**tabular_spec, "data": {"examples": 5000, "input_shape": inputs, "outputs": 4}}
        rec = services.advise(owner=user, spec=spec)
        candidate = rec.result["candidates"][0]
        rows = []
        for batch in (16, 64, 256):
            for threads in (1, 2):
                seconds = step_cost(candidate, batch_size=batch, threads=threads, profile=profile).seconds
                rows += [(batch, threads, 1.5 * seconds, False), (batch, threads, 20 * seconds, True)]
        assert _swept(rec, device, rows).status == CalibrationJob.SUCCEEDED
    model = timemodels.refit_time_model(device=device)
    assert model is not None and (model.rows, model.networks) == (24, 4)
    assert model.validation["used"] and model.median_error < 0.1
