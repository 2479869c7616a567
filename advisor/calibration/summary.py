"""`sweep_summary()`: what a sweep of measured configurations says, for the results page and the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from advisor.calibration.devices import physical_cores as detect_physical_cores
from advisor.contract import Reason, Unreliability
from advisor.engine.batching import BATCH_TOLERANCE, smallest_near_fastest
from advisor.engine.rules import RULES_BY_ID
from advisor.engine.units import duration, rate, threads_text

THREADS_RULE = "cpu.threads.physical"  # the plan's rule without a profile; an old job judged by it
THREADS_SOURCE = "W §III-F, Table I; S §5"
DISAGREE_MARGIN = 0.05  # a thread count must beat the plan's by more than 5% to count as a disagreement
# where the plan's thread count came from (hardware_plan.threads_basis) -> its rule and how to say it
PLAN_THREADS = {
    "cores": ("cpu.threads.physical", "one per physical core"),
    "profiled": ("cpu.threads.profiled", "from the profile of {device}"),
    "measured": ("plan.measured", "from an earlier calibration"),
}


class RecommendedPlan(TypedDict):
    """What the recommendation planned for the candidate a job measures (running.recommended_plan), which
    the summary's findings judge: its threads and why, its device, its batch and the rule that chose it, and
    the largest batch the engine would choose for the data set."""

    threads: int | None
    threads_basis: str  # "cores", "profiled" or "measured"
    device: str | None
    batch_size: int
    batch_rule: str | None
    batch_max: int


class Brief(TypedDict):
    """One reliable configuration as the summary shows it."""

    batch_size: int
    threads: int
    allocator: str
    seconds_per_batch: float
    seconds_per_example: float
    examples_per_second: float
    noisy: bool


class ThreadStep(Brief):
    speedup: float  # over one thread (else the fewest measured) at the same batch


class Doubtful(TypedDict):
    """An unreliable configuration, with why (measure()'s unreliable_reasons)."""

    batch_size: int
    threads: int
    allocator: str
    seconds_per_batch: float
    reasons: list[Unreliability]


class OutOfMemory(TypedDict):
    batch_size: int
    message: str


class BatchVerdict(TypedDict):
    """The batch the sweep measured best against the plan's (`batch_rule`)."""

    rule: str
    plan_batch: int
    measured_best_batch: int
    agrees: bool | None  # None: the plan's batch itself was not measured
    text: str


class ThreadsVerdict(TypedDict):
    """The thread count the sweep measured best against the plan's (`threads_rule`)."""

    rule: str
    physical_cores: int
    rule_threads: int
    threads_basis: str | None  # None: the job did not record the plan's
    measured_best_threads: int
    agrees: bool | None  # None: the plan's count was not measured reliably at that batch
    margin: float | None
    text: str


class SweepSummary(TypedDict):
    fastest: Brief | None
    thread_scaling: list[ThreadStep]
    batch_scaling: list[Brief]
    oom: list[OutOfMemory]
    threads_rule: ThreadsVerdict | None
    batch_rule: BatchVerdict | None
    unreliable: list[Doubtful]
    reasons: list[Reason]


def _rows(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Accept result events ({"batch_size", "threads", "allocator", "result": measure()}) or flat rows. A
    row is read back as it came, JSON: measure()'s result with the event's configuration (what the summary
    makes of them is typed above)."""
    rows: list[Mapping[str, Any]] = []
    for item in results:
        inner = item.get("result")
        flat = (
            {**inner, **{k: v for k, v in item.items() if k != "result"}}
            if isinstance(inner, Mapping)
            else item
        )
        rows.append({"allocator": "default", "status": "ok", **flat})
    return rows


def _brief(row: Mapping[str, Any]) -> Brief:
    return {
        "batch_size": row["batch_size"],
        "threads": row["threads"],
        "allocator": row["allocator"],
        "seconds_per_batch": row["seconds_per_batch"],
        "seconds_per_example": row["seconds_per_batch"] / row["batch_size"],
        "examples_per_second": row["examples_per_second"],
        "noisy": bool(row.get("noisy")),
    }


def _doubtful(row: Mapping[str, Any]) -> Doubtful:
    return {
        "batch_size": row["batch_size"],
        "threads": row["threads"],
        "allocator": row["allocator"],
        "seconds_per_batch": row["seconds_per_batch"],
        "reasons": list(row.get("unreliable_reasons") or []),
    }


def unreliable_text(doubtful: Sequence[Doubtful]) -> str:
    """One sentence per unreliable configuration: which, and why."""
    return " ".join(
        f"Batch {d['batch_size']}, {threads_text(d['threads'])} ({d['allocator']} allocator): "
        + "; ".join(str(r["text"]) for r in d["reasons"])
        + "."
        for d in doubtful
    )


def sweep_summary(
    results: Sequence[Mapping[str, Any]],
    *,
    physical_cores: int | None = None,
    plan: RecommendedPlan | None = None,
) -> SweepSummary:
    """Fastest configuration per example, thread scaling (at the batch size measured with the most thread
    counts, nearest the fastest), batch scaling (at the fastest thread count), out-of-memory limits, and
    whether the measurement disagrees with the recommendation's plan. `results` are result events or flat
    rows (measure() dicts with batch_size); `plan` is plain data from the recommendation (JobPlan.recommended:
    threads, threads_basis "cores" | "profiled" | "measured", device, batch_size, batch_rule, batch_max).
    Without it the threads are judged against the physical cores (rule cpu.threads.physical), saying so.
    Unreliable configurations (measure()'s `unreliable`) decide nothing: they are listed in `unreliable` with
    their reasons, and everything else is read from the reliable ones."""
    rows = _rows(results)
    measured = [r for r in rows if r["status"] == "ok" and r.get("seconds_per_batch")]
    ok = [r for r in measured if not r.get("unreliable")]
    doubtful = [_doubtful(r) for r in measured if r.get("unreliable")]
    oom: list[OutOfMemory] = [
        {"batch_size": r["batch_size"], "message": r.get("message", "")} for r in rows if r["status"] == "oom"
    ]
    if not ok:
        return {
            "fastest": None,
            "thread_scaling": [],
            "batch_scaling": [],
            "oom": oom,
            "threads_rule": None,
            "batch_rule": None,
            "unreliable": doubtful,
            "reasons": [],
        }
    fastest = min(ok, key=lambda r: r["seconds_per_batch"] / r["batch_size"])
    # Scalings come from the allocator set-up that ran the sweep (most rows); a re-measure adds a row or two.
    sweep_alloc = max({r["allocator"] for r in ok}, key=lambda a: sum(r["allocator"] == a for r in ok))
    same_alloc = [r for r in ok if r["allocator"] == sweep_alloc]
    sweep_fastest = min(same_alloc, key=lambda r: r["seconds_per_batch"] / r["batch_size"])
    # Thread scaling at the batch size with the most thread counts measured (a doubling sweep drops slow
    # thread counts as it goes), the one nearest the fastest configuration's among those.
    counts: dict[int, set[int]] = {}
    for r in same_alloc:
        counts.setdefault(r["batch_size"], set()).add(r["threads"])
    widest = max(len(t) for t in counts.values())
    scaling_batch = min(
        (b for b, t in counts.items() if len(t) == widest), key=lambda b: abs(b - sweep_fastest["batch_size"])
    )
    at_batch = sorted((r for r in same_alloc if r["batch_size"] == scaling_batch), key=lambda r: r["threads"])
    base = next((r for r in at_batch if r["threads"] == 1), at_batch[0])
    thread_scaling = [_thread_step(r, base) for r in at_batch]
    at_threads = sorted(
        (r for r in same_alloc if r["threads"] == sweep_fastest["threads"]), key=lambda r: r["batch_size"]
    )
    batch_scaling = [_brief(r) for r in at_threads]
    cores = physical_cores or detect_physical_cores()
    batch_rule = _batch_verdict(batch_scaling, plan)
    summary: SweepSummary = {
        "fastest": _brief(fastest),
        "thread_scaling": thread_scaling,
        "batch_scaling": batch_scaling,
        "oom": oom,
        "threads_rule": None,
        "batch_rule": batch_rule,
        "unreliable": doubtful,
        "reasons": [],
    }
    if str(fastest.get("device", "cpu")).startswith("cpu"):
        verdict = _threads_verdict(at_batch, cores, plan, doubtful)
        summary["threads_rule"] = verdict
        summary["reasons"].append(_reason(verdict))
    if batch_rule is not None:
        summary["reasons"].append(_reason(batch_rule))
    return summary


def _thread_step(row: Mapping[str, Any], base: Mapping[str, Any]) -> ThreadStep:
    brief = _brief(row)
    return {**brief, "speedup": row["examples_per_second"] / base["examples_per_second"]}


def _reason(verdict: ThreadsVerdict | BatchVerdict) -> Reason:
    rule = RULES_BY_ID.get(str(verdict["rule"]))
    return {
        "rule": verdict["rule"],
        "text": verdict["text"],
        "source": rule.source if rule else THREADS_SOURCE,
    }


def _batch_verdict(batch_scaling: list[Brief], plan: RecommendedPlan | None) -> BatchVerdict | None:
    """The batch the sweep measured best (the smallest within BATCH_TOLERANCE of the fastest per example, as
    the engine's batch.profiled chooses from the model) against the plan's; None where fewer than two
    batches were measured or the job did not record the plan's batch."""
    planned = plan.get("batch_size") if plan else None
    if plan is None or len(batch_scaling) < 2 or not planned:
        return None
    # within the engine's bounds (batch.profiled: at most 256 and under a tenth of the data), which a
    # doubling sweep passes: a faster batch beyond them is no batch to train with
    cap = plan.get("batch_max")
    largest = max(int(cap), int(planned)) if cap else None
    per_example = {
        int(r["batch_size"]): float(r["seconds_per_example"])
        for r in batch_scaling
        if largest is None or int(r["batch_size"]) <= largest
    }
    if len(per_example) < 2:
        return None
    best = smallest_near_fastest(per_example)
    threads = batch_scaling[0]["threads"]
    shown = ", ".join(f"{duration(seconds)} at {b}" for b, seconds in sorted(per_example.items()))
    rule = str(plan.get("batch_rule") or "batch.start")
    said = f"The plan said mini-batches of {planned} (rule {rule})"
    measured = f"the sweep measured per example, on {threads_text(threads)}: {shown}"
    if planned not in per_example:
        agrees, text = None, f"{said}; {measured}, not {planned} itself, so it cannot judge it."
    elif best == planned:
        agrees = True
        text = f"{said}; {measured}: {planned} is the smallest within {BATCH_TOLERANCE:.0%} of the fastest."
    else:
        agrees = False
        text = (
            f"{said}; {measured}: {best} is the smallest within {BATCH_TOLERANCE:.0%} of the fastest. "
            f"Use mini-batches of {best} for this network on this machine."
        )
    return {
        "rule": rule,
        "plan_batch": planned,
        "measured_best_batch": best,
        "agrees": agrees,
        "text": text,
    }


def _plan_threads(plan: RecommendedPlan | None, cores: int) -> tuple[int, str, str]:
    """(threads, rule, how the plan chose them) from the job's plan data, else the physical cores."""
    basis = plan.get("threads_basis") if plan else None
    if plan is None or not plan.get("threads") or basis not in PLAN_THREADS:
        return cores, THREADS_RULE, "one per physical core; this job did not record the plan's own count"
    rule, how = PLAN_THREADS[str(basis)]
    return int(plan["threads"] or 0), rule, how.format(device=plan.get("device") or "this device")


def _threads_verdict(
    at_batch: list[Mapping[str, Any]], cores: int, plan: RecommendedPlan | None, doubtful: list[Doubtful]
) -> ThreadsVerdict:
    best = max(at_batch, key=lambda r: r["examples_per_second"])
    planned, rule, how = _plan_threads(plan, cores)
    plan_row = next((r for r in at_batch if r["threads"] == planned), None)
    b = best["batch_size"]
    said = f"The plan said {threads_text(planned)} ({how}, rule {rule})"
    verdict: ThreadsVerdict = {
        "rule": rule,
        "physical_cores": cores,
        "rule_threads": planned,
        # None: not recorded
        "threads_basis": plan.get("threads_basis") if plan and plan.get("threads") else None,
        "measured_best_threads": best["threads"],
        "agrees": None,
        "margin": None,
        "text": "",
    }
    if plan_row is None:
        unsure = [d for d in doubtful if d["batch_size"] == b and d["threads"] == planned]
        how_measured = (
            f"this sweep's measurement of {threads_text(planned)} at batch {b} was unreliable ("
            + "; ".join(str(r["text"]) for d in unsure for r in d["reasons"])
            + ")"
            if unsure
            else f"this sweep did not measure {threads_text(planned)} at batch {b}"
        )
        verdict["text"] = (
            f"{said}; {how_measured}, so it cannot judge it. "
            f"Best measured: {threads_text(best['threads'])}, "
            f"{rate(best['examples_per_second'], 'examples')}."
        )
        return verdict
    margin = best["examples_per_second"] / plan_row["examples_per_second"] - 1.0
    agrees = best["threads"] == planned or margin <= DISAGREE_MARGIN
    # Every thread count measured at this batch, once each: the plan's and the best one are among them.
    rates = {r["threads"]: r["examples_per_second"] for r in sorted(at_batch, key=lambda r: r["threads"])}
    measured = f"the sweep measured {threads_text(best['threads'])} fastest at batch {b}: " + ", ".join(
        f"{threads_text(t)} {rate(per_second, 'examples')}" for t, per_second in rates.items()
    )
    if agrees:
        text = f"The measurement agrees with the plan. {said}; {measured}."
    else:
        text = (
            f"The measurement disagrees with the plan. {said}; {measured}, {margin:.0%} faster with "
            f"{threads_text(best['threads'])}. Use {threads_text(best['threads'])} for this network on this "
            "machine."
        )
    return {**verdict, "agrees": agrees, "margin": margin, "text": text}
