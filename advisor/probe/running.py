"""Running one probe job in the worker on the device-job machinery (advisor/jobs.py): claim by a conditional
UPDATE, train in a supervised child, save each stage as it arrives, beat, honour cancel and the limit."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from advisor import jobs
from advisor.probe import conf
from advisor.probe.fit import probeable
from advisor.probe.learning.child import run_in_child
from advisor.probe.learning.plan import EpochTime, PlanEntry, ProbePlan
from advisor.probe.models import ProbeJob
from advisor.probe.services import PROBES
from advisor.queries import seconds_per_epoch

SMALL_NETWORK = 1_000_000  # parameters below which one thread trains faster than several (no contention)


def run_probe_job(*, job_id: int) -> str:
    """Claim the job (a re-delivered or duplicate message does nothing), then train in a supervised child,
    saving each stage as it arrives. Returns the job's final status (or 'skipped')."""
    return jobs.run_claimed(
        PROBES,
        job_id,
        related=("device", "recommendation", "sample"),
        watcher=_StageWatcher,
        execute=_train,
        conclude=_conclude,
    )


def _train(job: ProbeJob, watcher: _StageWatcher) -> dict[str, Any]:
    return run_in_child(
        make_plan(job),
        time_limit_s=float(job.time_limit_seconds),
        threads=threads_for(job),
        on_event=watcher.on_event,
        should_cancel=watcher.should_cancel,
    )


def make_plan(job: ProbeJob) -> ProbePlan:
    if job.sample is None:
        raise ValueError("the sample of this probe was deleted")
    rec = job.recommendation
    roles = {"shallow": job.shallow_candidate, "deep": job.deep_candidate}
    # the candidate each role trains: the recommendation's, changed where a next step proposed a variation
    chosen = {
        role: PlanEntry(index=index, candidate=candidate)
        for role, index in roles.items()
        if index is not None and (candidate := job.candidate(role)) is not None
    }
    # a calibration timed the candidate as recommended: a widened one's epochs are not those
    widened = int((job.variation or {}).get("width") or 1) != 1
    spe = {
        role: None if widened else seconds_per_epoch(rec, index, job.device) for role, index in roles.items()
    }
    task = rec.spec.get("task") or ""
    # a generation task's target is its two-sample score (learning/generation.py), not an accuracy
    target = (rec.spec.get("target") or {}).get("two_sample" if task == "generation" else "accuracy")
    # the candidates the probes before this one in its chain tried (the child adds this probe's own)
    chain = job.chain()[:-1]
    tried = sorted({i for j in chain for i in (j.shallow_candidate, j.deep_candidate) if i is not None})
    return ProbePlan(
        sample_path=str(job.sample.file),
        goal=rec.spec.get("goal") or "classify",
        target=None if target is None else float(target),
        full_examples=int(rec.spec["data"]["examples"]),
        shallow=chosen.get("shallow"),
        deep=chosen.get("deep"),
        budget_s=float(job.time_limit_seconds),
        seed=int(job.options.get("seed", 0)),
        device="cpu" if job.device.kind == "cpu" else f"cuda:{job.device.index}",
        seconds_per_epoch={k: EpochTime(seconds=v["seconds"], basis=v["basis"]) for k, v in spe.items() if v},
        task=task,
        candidates=[PlanEntry(index=i, candidate=rec.result["candidates"][i]) for i in probeable(rec)],
        tried=tried,
        previous=job.previous_id,
        previous_score=None if job.previous is None else job.previous.score,
        variation=dict(job.variation or {}),
        max_parameters=int(conf.value("PROBE_MAX_PARAMETERS")),
    )


def threads_for(job: ProbeJob) -> int:
    cores = job.device.cores or 1
    chosen = [job.candidate(role) for role in ("shallow", "deep")]
    biggest = max((int(c["parameters"] or 0) for c in chosen if c is not None), default=0)
    return 1 if biggest < SMALL_NETWORK else cores


class _StageWatcher(jobs.Watcher):
    """The machinery's watcher that also saves each stage at once (a stopped probe keeps what it
    measured)."""

    def __init__(self, job: ProbeJob) -> None:
        super().__init__(job, on_other=self._on_stage)
        self.results: dict[str, Any] = {}

    def _on_stage(self, event: dict[str, Any]) -> None:
        if event["type"] == "stage":
            self.results[str(event["stage"])] = event["data"]
            self.rows.update(results=self.results, heartbeat_at=timezone.now())


def _conclude(job: ProbeJob, watcher: _StageWatcher, outcome: dict[str, Any]) -> str:
    verdict = outcome.get("result")
    results = dict(watcher.results)
    results["timing"] = {"startup_s": outcome.get("startup_s"), "probe_s": outcome.get("probe_s")}
    if verdict is not None:
        results["verdict"] = verdict
    return jobs.finish(
        job,
        status=jobs.final_status(outcome),
        error=str(outcome.get("error") or ""),
        results=results,
        verdict=verdict,
    )
