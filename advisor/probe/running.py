"""Running one probe job in the worker, with the calibration runner's patterns (advisor/running.py): claim by
a conditional UPDATE, train in a spawned child, save each stage as it arrives, beat, honour cancel and the
limit."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db.models import F
from django.utils import timezone

from advisor.probe import services
from advisor.probe.learning.child import run_in_child
from advisor.probe.learning.plan import ProbePlan
from advisor.probe.models import ProbeJob
from advisor.workers import reap_orphaned_jobs

log = logging.getLogger(__name__)

CHECK_EVERY_SECONDS = 1.0
SMALL_NETWORK = 1_000_000  # parameters below which one thread trains faster than several (no contention)
MAX_ATTEMPTS = 2


def run_probe_job(*, job_id: int) -> str:
    claimed = ProbeJob.claim(job_id)
    if not claimed:
        log.info("probe %s not claimed (already taken, finished or cancelled)", job_id)
        return "skipped"
    job = ProbeJob.objects.select_related("device", "recommendation", "sample").get(pk=job_id)
    watcher = _Watcher(job)
    try:
        plan = make_plan(job)
        outcome = run_in_child(
            plan,
            time_limit_s=float(job.time_limit_seconds),
            threads=threads_for(job),
            on_event=watcher.on_event,
            should_cancel=watcher.should_cancel,
        )
    except Exception as exc:
        log.exception("probe %s crashed", job_id)
        outcome = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "result": None}
    return _finish(job, watcher, outcome)


def make_plan(job: ProbeJob) -> ProbePlan:
    if job.sample is None:
        raise ValueError("the sample of this probe was deleted")
    rec = job.recommendation
    roles = {"shallow": job.shallow_candidate, "deep": job.deep_candidate}
    chosen = {
        role: {"index": index, "candidate": rec.result["candidates"][index]}
        for role, index in roles.items()
        if index is not None
    }
    spe = {role: services.seconds_per_epoch(rec, index, job.device) for role, index in roles.items()}
    target = (rec.spec.get("target") or {}).get("accuracy")
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
        seconds_per_epoch={k: v for k, v in spe.items() if v},
    )


def threads_for(job: ProbeJob) -> int:
    cores = job.device.cores or 1
    biggest = max(
        (int((job.candidate(role) or {}).get("parameters") or 0) for role in ("shallow", "deep")), default=0
    )
    return 1 if biggest < SMALL_NETWORK else cores


class _Watcher:
    """Receives the child's events, saves each stage at once (a stopped probe keeps what it measured) and
    answers the cancel checks; doubles as the heartbeat."""

    def __init__(self, job: ProbeJob) -> None:
        self.job = job
        self.results: dict[str, Any] = {}
        self.last_check = 0.0
        self.cancelled = False

    def on_event(self, event: dict[str, Any]) -> None:
        now = timezone.now()
        if event["type"] == "stage":
            self.results[str(event["stage"])] = event["data"]
            ProbeJob.objects.filter(pk=self.job.pk).update(results=self.results, heartbeat_at=now)
        elif event["type"] == "progress":
            ProbeJob.objects.filter(pk=self.job.pk).update(
                progress=min(1.0, float(event.get("done", 0)) / max(float(event.get("total") or 1), 1e-9)),
                step=str(event.get("step", ""))[:300],
                heartbeat_at=now,
            )

    def should_cancel(self) -> bool:
        now = time.monotonic()
        if now - self.last_check >= CHECK_EVERY_SECONDS:
            self.last_check = now
            ProbeJob.objects.filter(pk=self.job.pk).update(heartbeat_at=timezone.now())
            self.cancelled = ProbeJob.objects.filter(pk=self.job.pk, cancel_requested=True).exists()
        return self.cancelled


def _finish(job: ProbeJob, watcher: _Watcher, outcome: dict[str, Any]) -> str:
    status = {"succeeded": ProbeJob.SUCCEEDED, "cancelled": ProbeJob.CANCELLED}.get(
        outcome.get("status", ""), ProbeJob.FAILED
    )
    verdict = outcome.get("result")
    results = dict(watcher.results)
    results["timing"] = {"startup_s": outcome.get("startup_s"), "probe_s": outcome.get("probe_s")}
    if verdict is not None:
        results["verdict"] = verdict
    ProbeJob.objects.filter(pk=job.pk, status=ProbeJob.RUNNING).update(
        status=status,
        error=str(outcome.get("error") or ""),
        results=results,
        verdict=verdict,
        finished_at=timezone.now(),
        progress=1.0 if status == ProbeJob.SUCCEEDED else F("progress"),
        step={"succeeded": "done", "cancelled": "cancelled", "failed": "failed"}[status],
    )
    return status


def reap_orphans(*, device_ids: list[str], stale_after: float) -> list[int]:
    """Probes left running by a worker that died: queued again once, else failed with the reason."""
    return reap_orphaned_jobs(
        ProbeJob,
        services.publish,
        device_ids=device_ids,
        stale_after=stale_after,
        max_attempts=MAX_ATTEMPTS,
        noun="probe",
    )
