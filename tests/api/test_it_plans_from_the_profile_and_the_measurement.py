"""POST recommendations/ with a profiled "device": the first candidate's batch and the plan's threads come
from the profile (batch.profiled, cpu.threads.profiled); after a calibration that measured another batch best,
GET follows it (plan.measured), and the calibration's findings judge the plan it was given."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from advisor import engine, profiles, running
from advisor.calibration import sweep_summary
from advisor.models import CalibrationJob, Device, MeasuredConfiguration, Recommendation
from tests.engine.profiles import synthetic_profile

pytestmark = pytest.mark.django_db
URL = "/api/v1/recommendations/"


def _rule(reasons: list[dict[str, Any]], rule: str) -> dict[str, Any] | None:
    return next((r for r in reasons if r["rule"] == rule), None)


def test_it_takes_the_batch_and_threads_from_the_devices_profile(
    api: APIClient, device: Device, tabular_spec: dict[str, Any]
) -> None:
    profiles.store_profile(device=device, profile=synthetic_profile())
    body = api.post(URL, {**tabular_spec, "device": device.pk}, format="json").json()
    expected = engine.recommend(tabular_spec, profile=synthetic_profile(), device=device.pk)
    first, plan = body["candidates"][0], body["hardware_plan"]
    assert first["training"]["batch_size"] == expected["candidates"][0]["training"]["batch_size"]
    reason = _rule(first["reasons"], "batch.profiled")
    assert reason is not None and f"the profile of {device.pk} predicts" in reason["text"]
    assert "Keskar" in reason["source"] and _rule(first["reasons"], "batch.start") is None
    assert (plan["threads"], plan["threads_basis"]) == (expected["hardware_plan"]["threads"], "profiled")
    assert _rule(plan["reasons"], "cpu.threads.profiled") is not None
    without = api.post(URL, tabular_spec, format="json").json()
    assert _rule(without["candidates"][0]["reasons"], "batch.start") is not None
    assert without["hardware_plan"]["threads_basis"] == "cores"


def _calibrated(rec: Recommendation, device: Device, batches: list[int]) -> CalibrationJob:
    """A job as the worker leaves it, through the worker's own summary and estimate: every batch measured
    at the same seconds per example, so the smallest is the best."""
    job = CalibrationJob.objects.create(
        owner=rec.owner,
        recommendation=rec,
        candidate=0,
        device=device,
        batch_sizes=batches,
        threads=[1],
        time_limit_seconds=60,
        status=CalibrationJob.RUNNING,
        started_at=timezone.now(),
    )
    events = []
    for b in batches:
        seconds = b * 1e-5
        result = {
            "seconds_per_batch": seconds,
            "examples_per_second": b / seconds,
            "device": "cpu",
            "threads": 1,
        }
        MeasuredConfiguration.objects.create(
            job=job, batch_size=b, threads=1, seconds_per_batch=seconds, result=result
        )
        events.append({"batch_size": b, "threads": 1, "allocator": "default", "result": result})
    summary = sweep_summary(events, physical_cores=2, plan=running.recommended_plan(job))
    estimate = running.measured_estimate(job, summary)
    CalibrationJob.objects.filter(pk=job.pk).update(
        status=CalibrationJob.SUCCEEDED, summary=summary, estimate=estimate, finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def test_the_recommendation_follows_the_batch_a_calibration_measured_best(
    api: APIClient, user: Any, device: Device, tabular_spec: dict[str, Any]
) -> None:
    profiles.store_profile(device=device, profile=synthetic_profile())
    spec = {**tabular_spec, "data": {**tabular_spec["data"], "examples": 20_000}}
    rec_id = api.post(URL, {**spec, "device": device.pk}, format="json").json()["id"]
    rec = Recommendation.objects.get(pk=rec_id)
    planned = rec.result["candidates"][0]["training"]["batch_size"]
    assert planned >= 64  # the profile's tiny network: a large batch, so a smaller one can win
    job = _calibrated(rec, device, [planned // 4, planned // 2, planned])
    finding = job.summary["batch_rule"]
    assert (finding["plan_batch"], finding["measured_best_batch"], finding["agrees"]) == (
        planned,
        planned // 4,
        False,
    )
    assert finding["rule"] == "batch.profiled"
    assert job.estimate["measured_at"]["best_batch"] == planned // 4
    assert job.estimate["measured_at"]["batch_size"] == planned // 4
    threads = job.summary["threads_rule"]
    assert threads["rule"] == "cpu.threads.profiled" and f"from the profile of {device.pk}" in threads["text"]
    body = api.get(f"{URL}{rec_id}/").json()
    first = body["candidates"][0]
    assert first["training"]["batch_size"] == planned // 4
    followed = _rule(first["reasons"], "plan.measured")
    assert followed is not None and f"calibration #{job.pk}" in followed["text"]
    assert first["estimate"]["basis"] == "measured" and first["estimate"]["batch_size"] == planned // 4
    # the stored answer is untouched: only the payload follows the measurement
    rec.refresh_from_db()
    assert rec.result["candidates"][0]["training"]["batch_size"] == planned
