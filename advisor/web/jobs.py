"""Presentation of a calibration job: progress and ETA, measured rows, plots, failures, updated estimate."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from advisor import engine
from advisor.models import CalibrationJob
from advisor.web.charts import calibration_charts
from advisor.web.present import analytic_for, duration, estimate_view, nbytes, si


def _estimated_memory(candidate: dict[str, Any], batch_size: int, device: str) -> int | None:
    """The engine's training-memory estimate at a measured configuration, to set beside what it took."""
    if not candidate:
        return None
    try:
        return engine.memory_for(candidate, batch_size=batch_size, device=device)["total"]
    except (KeyError, ValueError):  # a stored candidate the account cannot read: show no estimate
        return None


def measurement_rows(job: CalibrationJob) -> list[dict[str, Any]]:
    rows = []
    candidates = job.recommendation.result.get("candidates", [])
    candidate = candidates[job.candidate] if job.candidate < len(candidates) else {}
    for m in job.measurements.all():
        result = m.result or {}
        device = "cuda" if str(result.get("device", "")).startswith("cuda") else "cpu"
        rows.append(
            {
                "batch_size": m.batch_size,
                "threads": m.threads or 0,
                "threads_text": str(m.threads) if m.threads else "—",
                "allocator": m.allocator,
                "status": m.status,
                "seconds_per_batch": m.seconds_per_batch,
                "per_batch": duration(m.seconds_per_batch),
                "iqr": duration(result.get("iqr")),
                "iterations": result.get("iterations"),
                "examples_per_second": result.get("examples_per_second"),
                "throughput": si(result.get("examples_per_second")),
                "peak_memory": nbytes(result.get("peak_memory_bytes")),
                "estimated_memory": nbytes(_estimated_memory(candidate, m.batch_size, device)),
                "live_memory": nbytes(result.get("live_tensor_peak_bytes")),
                "achieved": si(result.get("achieved_flops"), "FLOP/s"),
                "noisy": bool(result.get("noisy")),
                "unreliable": bool(result.get("unreliable")),
                "reasons": "; ".join(str(r.get("text", "")) for r in result.get("unreliable_reasons") or []),
                "message": result.get("message", ""),
            }
        )
    return rows


def eta(job: CalibrationJob) -> dict[str, Any]:
    """Elapsed and remaining time: from the progress so far, never beyond the job's own time limit."""
    if job.status == CalibrationJob.QUEUED:
        return {"elapsed": None, "remaining": None, "text": f"waiting for {job.device_id} to pick it up"}
    if job.started_at is None:
        return {"elapsed": None, "remaining": None, "text": ""}
    end = job.finished_at or timezone.now()
    elapsed = (end - job.started_at).total_seconds()
    if job.finished:
        return {"elapsed": elapsed, "remaining": 0.0, "text": f"took {duration(elapsed)}"}
    limit_left = max(0.0, job.time_limit_seconds - elapsed)
    if job.progress > 0:
        remaining = min(elapsed * (1 - job.progress) / job.progress, limit_left)
        text = f"about {duration(remaining)} left ({duration(elapsed)} so far)"
    else:
        remaining = limit_left
        text = f"at most {duration(limit_left)} left (time limit); {duration(elapsed)} so far"
    return {"elapsed": elapsed, "remaining": remaining, "text": text}


def job_view(job: CalibrationJob, *, plots: bool = True) -> dict[str, Any]:
    rows = measurement_rows(job)
    candidates = job.recommendation.result.get("candidates", [])
    candidate = candidates[job.candidate] if job.candidate < len(candidates) else {}
    summary = job.summary or {}
    failures = [r for r in rows if r["status"] != "ok"]
    analytic = (
        analytic_for(job.recommendation.result, job.candidate, job.estimate or {}) if candidate else None
    )
    return {
        "rows": rows,
        "plots": calibration_charts(rows) if plots else [],
        "eta": eta(job),
        "percent": round(100 * job.progress),
        "candidate": candidate,
        "family": candidate.get("family", ""),
        "analytic": estimate_view(analytic) if analytic else None,
        "measured": estimate_view(job.estimate, analytic) if job.estimate else None,
        "default_allocator": default_allocator_view(rows, job.estimate or {}),
        "failures": failures,
        # unreliable configurations decide nothing; a sweep of nothing else publishes no measured time
        "withheld": summary.get("withheld"),
        "unreliable_count": sum(r["unreliable"] for r in rows),
        "measure_again": job.finished
        and not job.options.get("spread")
        and (bool(summary.get("withheld")) or any(r["unreliable"] for r in rows)),
        "reasons": summary.get("reasons", []),
        "stop_reason": summary.get("stop_reason"),
        "data_parallel": [
            {
                "world_size": r["world_size"],
                "backend": r["backend"],
                "threads": r["threads_per_rank"],
                "per_step": duration(r["seconds_per_step"]),
                "throughput": si(r["examples_per_second"]),
                "efficiency": f"{r['efficiency']:.0%}",
                "allreduce": f"{duration(r['allreduce_seconds'])} ({r['allreduce_share']:.0%})",
            }
            for r in summary.get("data_parallel", [])
        ],
        "batch_text": ", ".join(map(str, job.batch_sizes)) or "recommended, doubling",
        "threads_text": ", ".join(map(str, job.threads)) or "1 up to the cores",
    }


def default_allocator_view(rows: list[dict[str, Any]], estimate: dict[str, Any]) -> dict[str, Any] | None:
    """When the headline was measured with a tuned allocator, the same set-up with the default one: time to
    train scales with time per batch (same batch, same number of batches), so both headlines are honest."""
    at = estimate.get("measured_at") or {}
    if at.get("allocator", "default") == "default" or not estimate.get("seconds_per_batch"):
        return None
    same = [
        r
        for r in rows
        if r["status"] == "ok"
        and r["allocator"] == "default"
        and r["batch_size"] == at.get("batch_size")
        and r["threads"] == (at.get("threads") or 0)
        and r["seconds_per_batch"]
    ]
    if not same:
        return None
    scale = same[0]["seconds_per_batch"] / estimate["seconds_per_batch"]
    return {
        "per_batch": duration(same[0]["seconds_per_batch"]),
        "per_epoch": duration((estimate.get("seconds_per_epoch") or 0) * scale or None),
        "to_train": duration((estimate.get("seconds_to_train") or 0) * scale or None),
    }
