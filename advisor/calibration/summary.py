"""`sweep_summary()`: what a sweep of measured configurations says, for the results page and the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from advisor.calibration.devices import physical_cores as detect_physical_cores
from advisor.calibration.words import threads_text

THREADS_RULE = "cpu.threads.physical"
THREADS_SOURCE = "W §III-F, Table I; S §5"
DISAGREE_MARGIN = 0.05  # a thread count must beat the rule's by more than 5% to count as a disagreement


def _rows(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Accept result events ({"batch_size", "threads", "allocator", "result": measure()}) or flat rows."""
    rows = []
    for item in results:
        inner = item.get("result")
        row = (
            {**inner, **{k: v for k, v in item.items() if k != "result"}}
            if isinstance(inner, Mapping)
            else dict(item)
        )
        row.setdefault("allocator", "default")
        row.setdefault("status", "ok")
        rows.append(row)
    return rows


def _brief(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "batch_size": row["batch_size"],
        "threads": row["threads"],
        "allocator": row["allocator"],
        "seconds_per_batch": row["seconds_per_batch"],
        "seconds_per_example": row["seconds_per_batch"] / row["batch_size"],
        "examples_per_second": row["examples_per_second"],
        "noisy": bool(row.get("noisy")),
    }


def sweep_summary(
    results: Sequence[Mapping[str, Any]], *, physical_cores: int | None = None
) -> dict[str, Any]:
    """Fastest configuration per example, thread scaling (at the batch size measured with the most thread
    counts, nearest the fastest), batch scaling (at the fastest thread count), out-of-memory limits, and
    whether the measurement disagrees with rule cpu.threads.physical. `results` are result events or flat
    rows (measure() dicts with batch_size)."""
    rows = _rows(results)
    ok = [r for r in rows if r["status"] == "ok" and r.get("seconds_per_batch")]
    oom = [
        {"batch_size": r["batch_size"], "message": r.get("message", "")} for r in rows if r["status"] == "oom"
    ]
    if not ok:
        return {
            "fastest": None,
            "thread_scaling": [],
            "batch_scaling": [],
            "oom": oom,
            "threads_rule": None,
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
    thread_scaling = [
        {**_brief(r), "speedup": r["examples_per_second"] / base["examples_per_second"]} for r in at_batch
    ]
    at_threads = sorted(
        (r for r in same_alloc if r["threads"] == sweep_fastest["threads"]), key=lambda r: r["batch_size"]
    )
    batch_scaling = [_brief(r) for r in at_threads]
    cores = physical_cores or detect_physical_cores()
    summary: dict[str, Any] = {
        "fastest": _brief(fastest),
        "thread_scaling": thread_scaling,
        "batch_scaling": batch_scaling,
        "oom": oom,
        "threads_rule": None,
        "reasons": [],
    }
    if str(fastest.get("device", "cpu")).startswith("cpu"):
        verdict = _threads_verdict(at_batch, cores)
        summary["threads_rule"] = verdict
        summary["reasons"].append({"rule": THREADS_RULE, "text": verdict["text"], "source": THREADS_SOURCE})
    return summary


def _threads_verdict(at_batch: list[dict[str, Any]], cores: int) -> dict[str, Any]:
    best = max(at_batch, key=lambda r: r["examples_per_second"])
    rule_row = next((r for r in at_batch if r["threads"] == cores), None)
    b = best["batch_size"]
    if rule_row is None:
        text = (
            f"Rule {THREADS_RULE} says threads = physical cores ({cores}); this sweep did not measure "
            f"{cores} threads at batch {b}, so it cannot confirm it. "
            f"Best measured: {threads_text(best['threads'])}, "
            f"{best['examples_per_second']:.0f} examples/s."
        )
        return {
            "rule": THREADS_RULE,
            "physical_cores": cores,
            "rule_threads": cores,
            "measured_best_threads": best["threads"],
            "agrees": None,
            "margin": None,
            "text": text,
        }
    margin = best["examples_per_second"] / rule_row["examples_per_second"] - 1.0
    agrees = best["threads"] == cores or margin <= DISAGREE_MARGIN
    # Every thread count measured at this batch, once each: the rule's and the best one are among them.
    rates = {r["threads"]: r["examples_per_second"] for r in sorted(at_batch, key=lambda r: r["threads"])}
    measured = f"measured at batch {b}: " + ", ".join(
        f"{threads_text(t)} {rate:.0f} examples/s" for t, rate in rates.items()
    )
    if agrees:
        text = f"The measurement agrees with rule {THREADS_RULE} (threads = physical cores = {cores}): "
        text += f"{measured}."
    else:
        text = (
            f"The measurement disagrees with rule {THREADS_RULE} (threads = physical cores = {cores}, "
            f"{THREADS_SOURCE}): {measured}, {margin:.0%} faster with {threads_text(best['threads'])}. "
            f"Use {threads_text(best['threads'])} for this network on this machine."
        )
    return {
        "rule": THREADS_RULE,
        "physical_cores": cores,
        "rule_threads": cores,
        "measured_best_threads": best["threads"],
        "agrees": agrees,
        "margin": margin,
        "text": text,
    }
