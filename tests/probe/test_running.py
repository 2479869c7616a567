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
    wider = ProbeJob.objects.get(pk=job.pk)  # a later probe of the same candidate, widened by a next step
    wider.pk, wider.variation, wider.verdict = None, {"width": 2}, {**verdict, "shallow_score": 0.5}
    wider.finished_at = timezone.now() + timedelta(seconds=1)  # the latest
    wider.save()
    assert queries.latest_probe_estimates(job.recommendation)[job.shallow_candidate]["score"] == 0.97


def test_it_plans_a_next_step_alone_with_what_its_chain_tried(user: Any, job: ProbeJob) -> None:
    step = {"diagnosis": "under-fitting", "candidate": job.deep_candidate, "reason": "more parameters"}
    verdict = {"met": False, "chosen": "shallow", "shallow_score": 0.93, "next": step}
    ProbeJob.objects.filter(pk=job.pk).update(status=ProbeJob.SUCCEEDED, verdict=verdict)
    job.refresh_from_db()
    after, created = services.submit_next(owner=user, job=job)
    assert created and after.previous_id == job.pk and after.chain() == [job, after]
    plan = running.make_plan(after)
    assert plan.previous == job.pk and plan.shallow is None
    assert plan.previous_score == 0.93  # what a next widening must beat
    assert plan.deep is not None and plan.deep["index"] == job.deep_candidate
    assert plan.tried == sorted({job.shallow_candidate, job.deep_candidate})  # type: ignore[type-var]
    assert [c["index"] for c in plan.candidates] == list(range(len(job.recommendation.result["candidates"])))


@pytest.mark.parametrize(
    ("variation", "width", "decay"),
    [
        ({"width": 2}, 2, None),  # under-fitting: every hidden width x2
        ({"width": 4, "weight_decay": 0.001}, 4, 0.001),  # x2 then x2 again, then over-fitting
        ({"weight_decay": 0.001}, 1, 0.001),
    ],
)
def test_it_plans_and_shows_the_changed_candidate_a_next_step_proposes(
    user: Any, api: Any, job: ProbeJob, variation: dict[str, float], width: int, decay: float | None
) -> None:
    """POST next with a step that changes the same candidate: the new probe stores the variation, its API
    shows it, and its plan trains the changed network (recounted by the engine) and carries the variation
    on, for the step after it to build on."""
    index = job.deep_candidate
    assert index is not None
    step = {
        "diagnosis": "under-fitting",
        "candidate": index,
        "change": "with every hidden width x2",
        "variation": variation,
        "reason": "probe it again",
    }
    ProbeJob.objects.filter(pk=job.pk).update(
        status=ProbeJob.SUCCEEDED, verdict={"met": False, "chosen": "deep", "next": step}
    )
    answer = api.post(f"/api/v1/probes/{job.pk}/next/")
    assert answer.status_code == 202, answer.json()
    assert answer.json()["variation"] == variation
    after = ProbeJob.objects.get(pk=answer.json()["id"])
    assert after.variation == variation and after.previous_id == job.pk
    plan = running.make_plan(after)
    base = job.recommendation.result["candidates"][index]
    trained = plan.deep["candidate"]  # type: ignore[index]
    assert plan.variation == variation and plan.max_parameters == 20_000_000
    assert trained["hidden_sizes"] == [s * width for s in base["hidden_sizes"]]
    assert (trained["parameters"] > base["parameters"]) == (width > 1)
    assert trained["training"].get("weight_decay") == decay
    assert ("deep" in plan.seconds_per_epoch) == (width == 1)  # timed as recommended, not as widened


def test_it_refuses_a_change_that_passes_the_parameter_cap(
    user: Any, api: Any, job: ProbeJob, settings: Any
) -> None:
    index = job.deep_candidate
    assert index is not None
    settings.PROBE_MAX_PARAMETERS = job.recommendation.result["candidates"][index]["parameters"] + 1
    step = {"diagnosis": "under-fitting", "candidate": index, "variation": {"width": 2}, "reason": "wider"}
    ProbeJob.objects.filter(pk=job.pk).update(
        status=ProbeJob.SUCCEEDED, verdict={"met": False, "chosen": "deep", "next": step}
    )
    answer = api.post(f"/api/v1/probes/{job.pk}/next/")
    assert answer.status_code == 400
    assert "with every hidden width x2 has" in " ".join(answer.json()["probe"])
    assert "above this server's probe cap" in " ".join(answer.json()["probe"])
