"""A calibration's sweep as its work plan: the configurations calibration/child.py will measure, in order,
each with its expected seconds (`sweep_work`, at submit), and the same plan followed along as the sweep
measures (`with_measured`: the configurations it ran, the thread counts it still times, its re-measure's
price). The child decides by the same rules (`after_batch`), so the plan and the job agree where they can.

No Django, no torch (engine.remaining's estimator reads the plans this makes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from advisor.engine.remaining import CHILD_START_S, Mark, WorkPlan


@dataclass(frozen=True)
class SweepPlan:
    """A calibration's sweep as the job asks it (calibration.runner.JobPlan with its defaults resolved)."""

    batch_sizes: tuple[int, ...]  # empty: doubling from batch_start up to max_batch_size
    threads: tuple[int, ...]
    batch_start: int
    max_batch_size: int
    min_iterations: int
    min_seconds: float
    warmup: int
    budget_s: float  # the first child's budget: the sweep budget or 70% of the limit
    limit_s: float
    stop_on_plateau: bool = True


# A configuration's duration at its measured seconds per batch p, fitted to 817 configurations of one host's
# quiet `bench queue --forecast` runs and judged on two other hosts' runs
# (bench/results/queue_intel-xeon-2c_forecast-steps/): building the step and its batch, 40 ms; then warm-up
# and the tracked step; then timed steps until the stopping rule's interval check passes
# (measure.StoppingRule), which is seldom at the minimums: the 90% interval of five steps is their whole
# range, rarely within ±5%, and the next check comes at seven; past min_seconds the check that passes comes
# a quarter later, about five steps more. The form before (150 ms, the minimums exactly) put a fast
# configuration 20% long and one of 50 ms a step or more 25-40% short.
CONFIG_OVERHEAD_S = 0.04
FEWEST_TIMED, STEPS_PAST_SECONDS = 7, 5
# From the last configuration's end to the job's (the summary, the results stored): 2-4 ms median, 20 ms
# at most, over 200 jobs on two hosts (queue_amd-epyc-2c_forecast-tail/).
FINISH_S = 0.02
# a doubling adding less than 5% examples/s counts towards a plateau, two in a row stop the sweep; thread
# counts this much slower than the best are not timed at the next batch size
PLATEAU_GAIN, PLATEAU_DOUBLINGS, PRUNE_MARGIN = 1.05, 2, 0.25


def after_batch(
    rates: dict[int, float], best: float, flat: int, keep: frozenset[int] = frozenset()
) -> tuple[list[int], float, int]:
    """A doubling sweep after one batch size, from its examples/s per thread count: the thread counts still
    worth timing (within PRUNE_MARGIN of the best, or in `keep`: measured unreliably, so no ground to drop
    them), the best rate so far, and how many doublings in a row gained less than PLATEAU_GAIN.
    calibration/child.py runs its sweep by this and sweep_work plans by it."""
    top = max(rates.values())
    active = [t for t, r in rates.items() if r >= top * (1.0 - PRUNE_MARGIN) or t in keep]
    return active, max(best, top), flat + 1 if top < best * PLATEAU_GAIN else 0


def configuration_seconds(per_batch: float, sweep: SweepPlan) -> float:
    """One configuration: warm-up and one tracked step, then timed steps until the stopping rule is met."""
    fewest = max(sweep.min_iterations, FEWEST_TIMED)
    timed = max(fewest * per_batch, sweep.min_seconds + STEPS_PAST_SECONDS * per_batch)
    return CONFIG_OVERHEAD_S + (sweep.warmup + 1) * per_batch + timed


def sweep_work(sweep: SweepPlan, per_batch: Callable[[int, int], float]) -> WorkPlan:
    """The configurations the sweep will measure, as child.run_sweep picks them, with each one's expected
    seconds from `per_batch(batch, threads)` (the candidate's estimate): every sweep stops at its budget (a
    configuration expected to end after it is not started); explicit batch sizes are otherwise measured in
    full; a doubling sweep also stops at a predicted plateau, and drops thread counts predicted 25% slower
    than the best."""
    if sweep.batch_sizes:
        sizes, doubling = sorted(set(sweep.batch_sizes)), False
    else:
        sizes, b = [], max(1, sweep.batch_start)
        while b <= sweep.max_batch_size:
            sizes.append(b)
            b *= 2
        sizes, doubling = sizes or [sweep.max_batch_size], True
    steps: list[float] = []
    configs: list[tuple[int, int]] = []  # each step's batch and thread count
    active = list(sweep.threads)
    best, flat = 0.0, 0
    for batch in sizes:
        rates: dict[int, float] = {}
        for t in active if doubling else sweep.threads:
            seconds = configuration_seconds(per_batch(batch, t), sweep)
            if steps and sum(steps) + seconds > sweep.budget_s:
                return _sweep_plan(sweep, steps, configs)
            steps.append(seconds)
            configs.append((batch, t))
            rates[t] = batch / max(per_batch(batch, t), 1e-12)
        if not doubling:
            continue
        active, best, flat = after_batch(rates, best, flat)
        if sweep.stop_on_plateau and flat >= PLATEAU_DOUBLINGS:
            break
    return _sweep_plan(sweep, steps, configs)


def _sweep_plan(sweep: SweepPlan, steps: list[float], configs: list[tuple[int, int]]) -> WorkPlan:
    """The plan, with the budget the child stops at: explicit batch sizes too (child._measure_plan asks
    out_of_time before every configuration). Planned as if measured in full, a busy box's grid was priced
    at its stalled 2-thread pace for configurations the child never started (a loaded LSTM put at 200 s
    left where 40 s were: bench/results/queue_amd-epyc-2c_grid-budget/README.md)."""
    threads, batches = tuple(t for _, t in configs), tuple(b for b, _ in configs)
    return WorkPlan(
        CHILD_START_S, tuple(steps), FINISH_S, sweep.limit_s, sweep.budget_s, threads=threads, batches=batches
    )


def sweep_to_json(sweep: SweepPlan) -> dict[str, Any]:
    """The sweep as stored with the job's plan: how long a configuration takes at a measured seconds per batch
    (configuration_seconds) reads it, once the sweep has measured one (with_measured)."""
    return {
        "sweep": {**asdict(sweep), "batch_sizes": list(sweep.batch_sizes), "threads": list(sweep.threads)}
    }


def sweep_from_json(stored: Any) -> SweepPlan | None:
    """The sweep sweep_to_json stored with a job's plan; None for a plan stored without one (a spread
    calibration's, or one stored before sweeps were)."""
    if not isinstance(stored, dict) or not isinstance(stored.get("sweep"), dict):
        return None
    raw = stored["sweep"]
    return SweepPlan(**{**raw, "batch_sizes": tuple(raw["batch_sizes"]), "threads": tuple(raw["threads"])})


# a measured configuration: batch, threads, seconds per batch, measured unreliably
Timed = tuple[int, int, float, bool]


def first_child(rows: Sequence[Sequence[Any]]) -> list[Timed]:
    """A calibration's measured rows (batch, threads, seconds per batch or None, allocator, unreliable) in
    the order they ran, as with_measured takes them: the first child's (the first row's allocator; a
    re-measure runs under the other), timed ones."""
    first = rows[0][3] if rows else None
    return [
        (int(r[0]), int(r[1] or 1), float(r[2]), len(r) > 4 and bool(r[4]))  # runs saved before the flag
        for r in rows
        if r[3] == first and r[2]
    ]


def with_measured(plan: WorkPlan, stored: Any, measured: Sequence[Timed], marks: Sequence[Mark]) -> WorkPlan:
    """The plan as far as the sweep's configurations measured by the latest mark tell:

    - its steps are those configurations (each at its planned seconds, so that the marks pace the right
      ones), then the planned configurations still to come at the thread counts the sweep still times (it
      drops those 25% slower than the best at a batch size: `after_batch` on the measured rates);
    - its allocator re-measure is priced as the configuration it will time: the fastest per example among
      the reliable ones (calibration.findings.configs_to_recheck), often the largest batch.

    `stored`: the job's plan as sweep_to_json stored it; a plan without its sweep, or nothing measured yet,
    stands. Where the sweep stops stays the plan's until a measured batch size decides it (_rebased):
    predicting a plateau from the measured throughput's trend was tried and left out, as a CNN's small
    batches are timed too noisily to say (bench/results/queue_amd-epyc-2c_forecast-measured/)."""
    measured = measured[: max(0, math.floor(marks[-1].done))] if marks else []
    sweep = sweep_from_json(stored)
    if sweep is None or not measured:
        return plan
    fastest = min(measured, key=lambda m: (m[3], m[2] / m[0]))  # reliable first, then seconds per example
    plan = replace(plan, restart_step_s=configuration_seconds(fastest[2], sweep))
    if sweep.batch_sizes or len(plan.batches) != len(plan.steps) or len(plan.threads) != len(plan.steps):
        return plan  # explicit batch sizes are measured in full; a plan stored without its configurations
    return _rebased(plan, measured, sweep)


def _rebased(plan: WorkPlan, measured: Sequence[Timed], sweep: SweepPlan) -> WorkPlan:
    """with_measured's steps: what the doubling sweep measured, then what it will still measure. From its
    first whole batch size on, of the plan's batch sizes: the one under way at every thread count the sweep
    still times (`sweep.threads`, in its order), the later ones at those the plan foresaw there too, or that
    the sweep keeps for being measured unreliably (on a busy box, every one); before, the plan's own.

    Once a batch size is measured in full the sweep has decided what follows, by `after_batch` on its
    rates, and the plan's later batch sizes give way to it both ways:
    - a plateau reached ends it; one doubling short of a plateau the plan's later batch sizes are not
      counted past the next: the plan foresaw a gain at every doubling it kept, and the measured rates have
      just shown none (ETA samples within ±25%: +37 of 1,947 in the runs it was shaped on, +13 of 1,581 in
      five held-out runs: bench/results/queue_amd-epyc-2c_forecast-tail/);
    - a gain the plan did not foresee means the sweep doubles at least until a plateau could stop it
      (PLATEAU_DOUBLINGS without a gain) or it reaches its largest batch: where the plan ended sooner,
      those doublings are counted too, each priced from the latest measured seconds per batch at its thread
      count, scaled by the batch size (the plan has no estimate for them)."""
    planned = dict(zip(zip(plan.batches, plan.threads, strict=True), plan.steps, strict=True))
    threads = sweep.threads
    done = [(b, t) for b, t, _, _ in measured]
    current = done[-1][0]  # the batch size under way: its configurations may not all be measured yet
    whole = sorted({b for b, _ in done if b < current})
    ahead = [c for c in planned if c not in done]
    beyond: dict[tuple[int, int], float] = {}  # configurations past the plan: their seconds
    if whole:
        active, best, flat = set(threads), 0.0, 0
        keep: frozenset[int] = frozenset()
        sizes = sorted({b for b in plan.batches if b >= current})
        extra: list[int] = []
        for batch in [*whole, current]:
            if batch == current and any((current, t) not in done for t in active):
                break  # under way: what follows it is not decided yet
            rows = [m for m in measured if m[0] == batch]
            rates = {t: b / max(s, 1e-12) for b, t, s, _ in rows}
            keep = frozenset(t for _, t, _, unreliable in rows if unreliable)
            kept, best, flat = after_batch(rates, best, flat, keep)
            active = set(kept)
            if batch == current:
                sizes = [b for b in sizes if b > current]
                need = PLATEAU_DOUBLINGS - flat if sweep.stop_on_plateau else math.inf
                if sweep.stop_on_plateau and flat >= PLATEAU_DOUBLINGS - 1:
                    sizes = sizes[: max(0, PLATEAU_DOUBLINGS - flat)]  # at a plateau: none; one short: one
                last = sizes[-1] if sizes else current
                while len(sizes) < need and last * 2 <= sweep.max_batch_size:
                    last *= 2
                    extra.append(last)
                    sizes.append(last)
                current = sizes[0] if sizes else current
        ahead = [
            (b, t)
            for b in sizes
            for t in threads
            if t in active
            and (b, t) not in done
            and (b == current or (b, t) in planned or t in keep or b in extra)
        ]
        latest = {t: (b, s) for b, t, s, _ in measured}
        for b, t in ahead:
            if b in extra:  # past the plan's largest batch: the plan has no seconds for it
                at, seconds = latest.get(t, (measured[-1][0], measured[-1][2]))
                beyond[b, t] = configuration_seconds(seconds * b / at, sweep)
    # a configuration the plan dropped and the sweep did not: as the plan's other ones at that batch size
    at_batch = {b: s for (b, _), s in planned.items()}
    configs = [*done, *ahead]
    return replace(
        plan,
        steps=tuple(planned.get(c, beyond.get(c, at_batch.get(c[0], plan.typical_s))) for c in configs),
        threads=tuple(t for _, t in configs),
        batches=tuple(b for b, _ in configs),
    )
