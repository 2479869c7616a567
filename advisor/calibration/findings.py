"""The allocator finding of a job (rule cpu.allocator): is system time significant, what did tuning gain?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from advisor.calibration.allocator import JEMALLOC_CONF, SOURCE, TUNED_GLIBC_ENV
from advisor.engine.units import duration, ratio, threads_text

RULE = "cpu.allocator"
MIN_GAIN = 0.03  # below 3% less time the difference is within run-to-run noise: keep the default


def _ok(results: Sequence[dict[str, Any]], allocator: str) -> list[dict[str, Any]]:
    return [e for e in results if e["allocator"] == allocator and e["result"]["status"] == "ok"]


def _unreliable(e: dict[str, Any]) -> bool:
    return bool(e["result"].get("unreliable"))


def _per_example(e: dict[str, Any]) -> float:
    return float(e["result"]["seconds_per_batch"]) / int(e["batch_size"])


def _fastest(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest per example, among the reliable configurations where there are any."""
    return min(rows, key=lambda e: (_unreliable(e), _per_example(e)))


def _share(e: dict[str, Any]) -> float:
    r = e["result"]
    cpu = r["user_seconds_per_step"] + r["system_seconds_per_step"]
    return float(r["system_seconds_per_step"] / cpu) if cpu > 0 else 0.0


def system_share(results: Sequence[dict[str, Any]]) -> float:
    """System time as a share of CPU time per step, at the fastest default-allocator configuration."""
    ok = _ok(results, "default")
    return _share(_fastest(ok)) if ok else 0.0


def configs_to_recheck(results: Sequence[dict[str, Any]]) -> list[tuple[int, int]]:
    """The fastest configuration per example under the default allocator: the one the user would train with.
    (One configuration only: the tuned child pays a fresh start of torch, and the job has a time limit.)"""
    ok = _ok(results, "default")
    if not ok:
        return []
    best = _fastest(ok)
    return [(int(best["batch_size"]), int(best["threads"]))]


def _times(speedup: float) -> str:
    """The tuned step's time as a multiple of the default's: "x0.80" (20% less), "x3.41" (slower)."""
    return ratio(1.0 / speedup)


def allocator_finding(results: Sequence[dict[str, Any]], share: float, threshold: float) -> dict[str, Any]:
    """Compare default and tuned at the same configurations; recommend the faster one, with its gain."""
    default = {(e["batch_size"], e["threads"]): e for e in _ok(results, "default")}
    pairs = []
    for e in _ok(results, "tuned"):
        d = default.get((e["batch_size"], e["threads"]))
        if d is None:
            continue
        d_s, t_s = d["result"]["seconds_per_batch"], e["result"]["seconds_per_batch"]
        pairs.append(
            {
                "batch_size": e["batch_size"],
                "threads": e["threads"],
                "default_seconds_per_batch": d_s,
                "tuned_seconds_per_batch": t_s,
                "gain": 1.0 - t_s / d_s,
                "speedup": d_s / t_s,
                "default_minor_faults_per_step": d["result"]["minor_faults_per_step"],
                "tuned_minor_faults_per_step": e["result"]["minor_faults_per_step"],
                "default_system_share": _share(d),
                "tuned_system_share": _share(e),
                "unreliable": _unreliable(d) or _unreliable(e),
            }
        )
    finding: dict[str, Any] = {
        "rule": RULE,
        "source": SOURCE,
        "system_share": share,
        "threshold": threshold,
        "significant": share >= threshold,
        "checked": bool(pairs),
        "configurations": pairs,
        "gain": None,
        "recommended": "default",
        "env": {},
        "text": "",
        "reason": None,
    }
    if not pairs:
        finding["text"] = (
            f"System time was {share:.0%} of CPU time per step (threshold {threshold:.0%}): "
            "the allocator was not re-measured."
        )
        return finding
    best = min(pairs, key=lambda p: (p["unreliable"], p["tuned_seconds_per_batch"] / p["batch_size"]))
    finding["gain"] = best["gain"]
    settings = " ".join(f"{k}={v}" for k, v in TUNED_GLIBC_ENV.items())
    where = f"batch {best['batch_size']}, {threads_text(best['threads'])}"
    measured = (
        f"at {where}, system time was {best['default_system_share']:.0%} of CPU time with glibc's default "
        f"malloc ({best['default_minor_faults_per_step']:.0f} page faults per step); with {settings} "
        f"a step took {duration(best['tuned_seconds_per_batch'])} instead of "
        f"{duration(best['default_seconds_per_batch'])} "
        f"({_times(best['speedup'])} the time, "
        f"{best['tuned_minor_faults_per_step']:.0f} page faults per step)"
    )
    if best["unreliable"]:  # measured under contention or imprecisely: no ground for a change
        finding["text"] = (
            f"Measured {measured}; but a measurement of that pair was unreliable (see its configurations), "
            "so the default allocator stays until a quieter calibration measures it."
        )
    elif best["gain"] >= MIN_GAIN:
        finding.update(recommended="tuned", env=dict(TUNED_GLIBC_ENV))
        finding["text"] = (
            f"Measured {measured}. Start training with {settings}, or with jemalloc preloaded "
            f"(MALLOC_CONF={JEMALLOC_CONF}; a calibration with allocator jemalloc measures it)."
        )
    else:
        finding["text"] = f"Measured {measured}: no gain beyond noise, keep the default allocator."
    finding["reason"] = {"rule": RULE, "text": finding["text"], "source": SOURCE}
    return finding
