"""The allocator finding of a job (rule cpu.allocator): is system time significant, what did tuning gain?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

from advisor.calibration.allocator import JEMALLOC_CONF, SOURCE, TUNED_GLIBC_ENV
from advisor.contract import Measurement, Reason
from advisor.engine.units import duration, ratio, threads_text

RULE = "cpu.allocator"
MIN_GAIN = 0.03  # below 3% less time the difference is within run-to-run noise: keep the default


class ResultEvent(TypedDict):
    """One measured configuration as a sweep's child sends it (child.py) and a job's summary keeps it."""

    type: str  # "result"
    batch_size: int
    threads: int
    allocator: str
    result: Measurement
    pid: NotRequired[int]


class AllocatorPair(TypedDict):
    """One configuration measured under both allocator set-ups."""

    batch_size: int
    threads: int
    default_seconds_per_batch: float
    tuned_seconds_per_batch: float
    gain: float  # the share of the step's time the tuned allocator saves
    speedup: float
    default_minor_faults_per_step: float
    tuned_minor_faults_per_step: float
    default_system_share: float
    tuned_system_share: float
    unreliable: bool


class AllocatorFinding(TypedDict):
    """A job's allocator finding (rule cpu.allocator): its summary's `allocator`."""

    rule: str
    source: str
    system_share: float
    threshold: float
    significant: bool
    checked: bool  # whether any configuration was re-measured under the tuned allocator
    configurations: list[AllocatorPair]
    gain: float | None
    recommended: str  # "default" or "tuned"
    env: dict[str, str]  # the tuned set-up's environment where it is recommended
    text: str
    reason: Reason | None


def _ok(results: Sequence[ResultEvent], allocator: str) -> list[ResultEvent]:
    return [e for e in results if e["allocator"] == allocator and e["result"]["status"] == "ok"]


def _unreliable(e: ResultEvent) -> bool:
    return bool(e["result"].get("unreliable"))


def _seconds(e: ResultEvent) -> float:
    """A measured configuration's seconds per batch (every "ok" one has them)."""
    seconds = e["result"]["seconds_per_batch"]
    if seconds is None:
        raise ValueError(f"a measured configuration without its seconds per batch: {e['result']['status']}")
    return seconds


def _per_example(e: ResultEvent) -> float:
    return float(_seconds(e)) / int(e["batch_size"])


def _fastest(rows: list[ResultEvent]) -> ResultEvent:
    """The fastest per example, among the reliable configurations where there are any."""
    return min(rows, key=lambda e: (_unreliable(e), _per_example(e)))


def _share(e: ResultEvent) -> float:
    r = e["result"]
    cpu = r["user_seconds_per_step"] + r["system_seconds_per_step"]
    return float(r["system_seconds_per_step"] / cpu) if cpu > 0 else 0.0


def system_share(results: Sequence[ResultEvent]) -> float:
    """System time as a share of CPU time per step, at the fastest default-allocator configuration."""
    ok = _ok(results, "default")
    return _share(_fastest(ok)) if ok else 0.0


def remeasure_chance(results: Sequence[ResultEvent], threshold: float) -> float | None:
    """How likely the re-measure under the tuned allocator is, from the configurations measured so far.
    The sweep's child decides it when its sweep ends (child._Sweep.remeasure_tuned), by the system share at
    the fastest default-allocator configuration against `threshold`; until then that share so far says it:
    0 at half the threshold or below, 1 at 1.5 times it or above, in proportion between. None before the
    first such configuration."""
    ok = _ok(results, "default")
    if not ok or threshold <= 0:
        return None
    return min(1.0, max(0.0, _share(_fastest(ok)) / threshold - 0.5))


def configs_to_recheck(results: Sequence[ResultEvent]) -> list[tuple[int, int]]:
    """The fastest configuration per example under the default allocator: the one the user would train with.
    (One configuration only: the job has a time limit, and the sweep has used most of it.)"""
    ok = _ok(results, "default")
    if not ok:
        return []
    best = _fastest(ok)
    return [(int(best["batch_size"]), int(best["threads"]))]


def _times(speedup: float) -> str:
    """The tuned step's time as a multiple of the default's: "x0.80" (20% less), "x3.41" (slower)."""
    return ratio(1.0 / speedup)


def allocator_finding(results: Sequence[ResultEvent], share: float, threshold: float) -> AllocatorFinding:
    """Compare default and tuned at the same configurations; recommend the faster one, with its gain."""
    default = {(e["batch_size"], e["threads"]): e for e in _ok(results, "default")}
    pairs: list[AllocatorPair] = []
    for e in _ok(results, "tuned"):
        d = default.get((e["batch_size"], e["threads"]))
        if d is None:
            continue
        d_s, t_s = _seconds(d), _seconds(e)
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
    finding: AllocatorFinding = {
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
        finding["recommended"], finding["env"] = "tuned", dict(TUNED_GLIBC_ENV)
        finding["text"] = (
            f"Measured {measured}. Start training with {settings}, or with jemalloc preloaded "
            f"(MALLOC_CONF={JEMALLOC_CONF}; a calibration with allocator jemalloc measures it)."
        )
    else:
        finding["text"] = f"Measured {measured}: no gain beyond noise, keep the default allocator."
    finding["reason"] = {"rule": RULE, "text": finding["text"], "source": SOURCE}
    return finding
