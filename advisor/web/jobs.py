"""Presentation of a calibration job: progress and ETA, measured rows, plots, failures, updated estimate."""

from __future__ import annotations

from typing import Any, TypedDict

from advisor import engine
from advisor.contract import Candidate, Estimate
from advisor.engine.units import duration, flops_rate, interval_text, nbytes, percent, quantity
from advisor.models import CalibrationJob, DeviceJob
from advisor.queueing import Forecaster, Place
from advisor.web.charts import calibration_charts
from advisor.web.present import analytic_for, estimate_view, family_title


class MeasurementRow(TypedDict):
    """One measured configuration as the calibration page lists it: its figures, and each as it reads."""

    batch_size: int
    threads: int  # 0 on a GPU
    threads_text: str
    allocator: str
    status: str
    seconds_per_batch: float | None
    per_batch: str
    iqr: str
    iterations: int | None
    examples_per_second: float | None
    throughput: str
    peak_memory: str
    estimated_memory: str
    estimated_resident: str
    live_memory: str
    achieved: str
    noisy: bool
    unreliable: bool
    reasons: str  # why it is unreliable
    message: str


class Eta(TypedDict):
    """A job's elapsed and remaining seconds as far as known, what to say of them, and a queued job's
    place."""

    elapsed: float | None
    remaining: float | None
    text: str
    place: Place | None


class AllocatorView(TypedDict):
    """The measured headline's times with the default allocator (default_allocator_view)."""

    per_batch: str
    per_epoch: str
    to_train: str


def _estimated_memory(candidate: Candidate | None, batch_size: int, device: str) -> int | None:
    """The engine's training-memory estimate at a measured configuration, to set beside what it took."""
    if not candidate:
        return None
    try:
        return engine.memory_for(candidate, batch_size=batch_size, device=device)["total"]
    except (KeyError, ValueError):  # a stored candidate the account cannot read: show no estimate
        return None


def _estimated_resident(candidate: Candidate | None, batch_size: int, device: str) -> int | None:
    """The engine's estimate of the training process's resident-set growth (CPU only), to set beside the
    growth a CPU configuration measured."""
    if not candidate or device != "cpu":
        return None
    try:
        return engine.resident_for(candidate, batch_size=batch_size)
    except (KeyError, ValueError):
        return None


def measurement_rows(job: CalibrationJob) -> list[MeasurementRow]:
    rows: list[MeasurementRow] = []
    candidates = job.recommendation.result.get("candidates", [])
    candidate = candidates[job.candidate] if job.candidate < len(candidates) else None
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
                "throughput": quantity(result.get("examples_per_second")),
                "peak_memory": nbytes(result.get("peak_memory_bytes")),
                "estimated_memory": nbytes(_estimated_memory(candidate, m.batch_size, device)),
                "estimated_resident": nbytes(_estimated_resident(candidate, m.batch_size, device)),
                "live_memory": nbytes(result.get("live_tensor_peak_bytes")),
                "achieved": flops_rate(result.get("achieved_flops")),
                "noisy": bool(result.get("noisy")),
                "unreliable": bool(result.get("unreliable")),
                "reasons": "; ".join(str(r.get("text", "")) for r in result.get("unreliable_reasons") or []),
                "message": result.get("message", ""),
            }
        )
    return rows


def eta(kind: str, job: DeviceJob, forecaster: Forecaster | None = None) -> Eta:
    """Elapsed and remaining time of a running job (engine.remaining: its plan paced by the progress so far,
    within its time limit), or a queued job's place in its device's fair-share queue and expected start."""
    forecaster = forecaster or Forecaster()
    empty: Eta = {"elapsed": None, "remaining": None, "text": "", "place": None}
    if job.status == DeviceJob.QUEUED:
        place = forecaster.place(kind, job)
        if place is None:
            return {**empty, "text": f"waiting for {job.device_id} to pick it up"}
        return {**empty, "text": place_text(job, place), "place": place}
    if job.started_at is None:
        return empty
    end = job.finished_at or forecaster.now
    elapsed = (end - job.started_at).total_seconds()
    if job.finished:
        return {**empty, "elapsed": elapsed, "remaining": 0.0, "text": f"took {duration(elapsed)}"}
    left = forecaster.finish(kind, job)
    if left is None:
        return {**empty, "elapsed": elapsed}
    seconds = float(left["remaining_seconds"])
    if left["basis"] == "limit":
        text = f"at most {duration(seconds)} left (time limit); {duration(elapsed)} so far"
    else:
        span = interval_text(*left["interval"])
        text = f"about {duration(seconds)} left (90%: {span}; {duration(elapsed)} so far)"
    return {**empty, "elapsed": elapsed, "remaining": seconds, "text": text}


def place_text(job: DeviceJob, place: Place) -> str:
    """ "2nd in line on box-cpu0 (2 jobs ahead); expected to start in about 40 s"."""
    position = int(place["position"])
    ahead = int(place["ahead"])
    where = f"{ordinal(position)} in line on {job.device_id} ({ahead} job{'' if ahead == 1 else 's'} ahead)"
    if place["draining"]:
        return f"{where}; the device is drained by staff: nothing starts until it is undrained"
    start, span = place["starts_in_seconds"], place["interval"]
    if not start:
        return f"{where}; next"
    within = f" (90%: {interval_text(*span)})" if span else ""
    return f"{where}; expected to start in about {duration(max(1.0, float(start)))}{within}"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def job_view(job: CalibrationJob, *, plots: bool = True) -> dict[str, Any]:
    rows = measurement_rows(job)
    candidates = job.recommendation.result.get("candidates", [])
    candidate = candidates[job.candidate] if job.candidate < len(candidates) else {}
    summary = job.summary or {}
    failures = [r for r in rows if r["status"] != "ok"]
    analytic = analytic_for(job.recommendation.result, job.candidate, job.estimate) if candidate else None
    return {
        "rows": rows,
        "plots": calibration_charts(rows) if plots else [],
        "eta": eta("calibration", job),
        "percent": round(100 * job.progress),
        "candidate": candidate,
        "family": candidate.get("family", ""),
        "family_title": family_title(candidate.get("family", ""), candidate.get("depth")),
        "on_cpu": job.device.kind == "cpu",  # the memory columns: a process's growth, or the CUDA allocator's
        "analytic": estimate_view(analytic) if analytic else None,
        "measured": estimate_view(job.estimate, analytic) if job.estimate else None,
        "default_allocator": default_allocator_view(rows, job.estimate) if job.estimate else None,
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
                "throughput": quantity(r["examples_per_second"]),
                "efficiency": percent(r["efficiency"]),
                "allreduce": f"{duration(r['allreduce_seconds'])} ({percent(r['allreduce_share'])})",
            }
            for r in summary.get("data_parallel", [])
        ],
        "batch_text": ", ".join(map(str, job.batch_sizes)) or "recommended, doubling",
        "threads_text": ", ".join(map(str, job.threads)) or "1 up to the cores",
    }


def default_allocator_view(rows: list[MeasurementRow], estimate: Estimate) -> AllocatorView | None:
    """When the headline was measured with a tuned allocator, the same set-up with the default one: time to
    train scales with time per batch (same batch, same number of batches), so both headlines are honest."""
    at = estimate.get("measured_at")
    if at is None or at.get("allocator", "default") == "default" or not estimate.get("seconds_per_batch"):
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
    seconds = float(same[0]["seconds_per_batch"] or 0.0)  # kept above only with its seconds
    scale = seconds / estimate["seconds_per_batch"]
    return {
        "per_batch": duration(seconds),
        "per_epoch": duration((estimate.get("seconds_per_epoch") or 0) * scale or None),
        "to_train": duration((estimate.get("seconds_to_train") or 0) * scale or None),
    }
