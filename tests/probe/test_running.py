"""The worker side of a probe without a worker: the claim, the plan it builds, and orphan recovery."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from advisor import jobs
from advisor.probe import queries, running, services
from advisor.probe.models import ProbeJob

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(user: Any, iris_rec: Any, device: Any, samples_dir: Any) -> ProbeJob:
    sample = services.create_sample(owner=user, demo="iris")
    return services.submit_probe(owner=user, recommendation=iris_rec, sample=sample, device=device)


@pytest.mark.parametrize("status", [ProbeJob.RUNNING, ProbeJob.SUCCEEDED, ProbeJob.CANCELLED])
def test_it_claims_only_a_queued_job(job: ProbeJob, status: str) -> None:
    ProbeJob.objects.filter(pk=job.pk).update(status=status, step="untouched")
    assert running.run_probe_job(job_id=job.pk) == "skipped"
    job.refresh_from_db()
    assert job.status == status and job.step == "untouched" and job.attempts == 0


def test_it_plans_the_shallow_and_deep_candidates_with_their_time_per_epoch(job: ProbeJob) -> None:
    plan = running.make_plan(job)
    assert plan.goal == "classify" and plan.target == 0.9 and plan.full_examples == 150
    assert plan.shallow["candidate"]["depth"] == "shallow" and plan.deep["candidate"]["depth"] == "deep"  # type: ignore[index]
    assert plan.seconds_per_epoch["shallow"]["basis"] == "catalog"
    assert plan.budget_s == job.time_limit_seconds


@pytest.mark.parametrize(
    ("attempts", "cancel", "final"),
    [(2, False, ProbeJob.FAILED), (1, True, ProbeJob.CANCELLED)],
)
def test_it_recovers_a_probe_whose_worker_died(
    job: ProbeJob, attempts: int, cancel: bool, final: str
) -> None:
    stale = timezone.now() - timedelta(minutes=5)
    ProbeJob.objects.filter(pk=job.pk).update(
        status=ProbeJob.RUNNING, heartbeat_at=stale, attempts=attempts, cancel_requested=cancel
    )
    assert jobs.reap_orphans(services.PROBES, device_ids=[job.device_id], stale_after=30) == [job.pk]
    job.refresh_from_db()
    assert job.status == final and "stopped while this probe ran" in job.error
    fresh = timezone.now()
    ProbeJob.objects.filter(pk=job.pk).update(status=ProbeJob.RUNNING, heartbeat_at=fresh)
    assert (
        jobs.reap_orphans(services.PROBES, device_ids=[job.device_id], stale_after=30) == []
    )  # a live one is left alone


def test_it_offers_a_finished_probes_numbers_per_candidate(job: ProbeJob) -> None:
    verdict = {
        "chosen": "shallow",
        "metric": "accuracy",
        "shallow_score": 0.97,
        "deep_score": None,
        "expected": {"estimate": 0.98},
        "time_to_target": {"reached": True, "epochs_at_full_size": 3, "seconds_to_target": 1.5},
    }
    assert queries.latest_probe_estimates(job.recommendation) == {}  # a queued probe has measured nothing
    ProbeJob.objects.filter(pk=job.pk).update(
        status=ProbeJob.SUCCEEDED, verdict=verdict, finished_at=timezone.now()
    )
    found = queries.latest_probe_estimates(job.recommendation)
    assert list(found) == [job.shallow_candidate]
    assert found[job.shallow_candidate]["score"] == 0.97
    assert found[job.shallow_candidate]["time_to_target"]["epochs_at_full_size"] == 3


def test_it_plans_a_next_step_alone_with_what_its_chain_tried(user: Any, job: ProbeJob) -> None:
    step = {"diagnosis": "under-fitting", "candidate": job.deep_candidate, "reason": "more parameters"}
    verdict = {"met": False, "chosen": "shallow", "next": step}
    ProbeJob.objects.filter(pk=job.pk).update(status=ProbeJob.SUCCEEDED, verdict=verdict)
    job.refresh_from_db()
    after, created = services.submit_next(owner=user, job=job)
    assert created and after.previous_id == job.pk and after.chain() == [job, after]
    plan = running.make_plan(after)
    assert plan.previous == job.pk and plan.shallow is None
    assert plan.deep is not None and plan.deep["index"] == job.deep_candidate
    assert plan.tried == sorted({job.shallow_candidate, job.deep_candidate})  # type: ignore[type-var]
    assert [c["index"] for c in plan.candidates] == list(range(len(job.recommendation.result["candidates"])))
