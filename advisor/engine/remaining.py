"""How long a device job has left, and how long a queued one will take: one estimator for both.

A job's `WorkPlan` says what it will do before it starts: a start-up (a child process importing torch), then
steps of work in order, each with its expected seconds (a calibration's configurations, from the sweep's
plan and the candidate's estimated time per batch; a probe's one budget), then a finishing tail; nothing
runs past its time limit. While it runs, its progress events become `Mark`s (when the count of finished
steps changed). `remaining()` paces the steps still to come by what the finished ones took against their
plan, so a machine slower or faster than the estimates (or a stopping rule that times a configuration for
longer or shorter than planned) is learned from the job's own progress as it comes, not assumed: the pace is
the median of each finished stretch's taken / planned seconds, the prior's one vote among them, so one
stalled configuration does not set the pace of the rest.

No Django, no torch: the web pages, the API, the fleet page and bench queue call the same functions.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any


@dataclass(frozen=True)
class WorkPlan:
    """What a job is expected to do, in seconds."""

    startup_s: float  # before the first step begins (a child's start, torch's import)
    steps: tuple[float, ...]  # each planned step's expected seconds, in order
    finish_s: float  # after the last step (summary, a re-measure under another allocator, exit)
    limit_s: float  # the job's time limit: nothing runs longer
    # steps start only this long after the first began (a sweep's budget: it starts no configuration
    # expected to end later); None: as long as the limit allows
    steps_budget_s: float | None = None
    # how likely a second child is after the steps (a calibration re-measuring its fastest configurations
    # under the tuned allocator when system time is significant): its start-up and a typical step, weighed
    restart_chance: float = 0.0
    restart_startup_s: float = 2.5  # a second child's start: the interpreter and torch, no plan to make
    # the configuration the second child times (the sweep's fastest per example, known once it is measured:
    # with_measured); None: a typical step
    restart_step_s: float | None = None
    # each planned step's thread count and batch (a sweep's configurations); empty: one pace for every step
    threads: tuple[int, ...] = ()
    batches: tuple[int, ...] = ()

    @property
    def restart_s(self) -> float:
        """The expected seconds of a second child not yet announced (its start-up is not paced)."""
        return self.restart_chance * (self.restart_startup_s + self.restart_step)

    @property
    def restart_step(self) -> float:
        return self.typical_s if self.restart_step_s is None else self.restart_step_s

    @property
    def expected_s(self) -> float:
        return min(self.limit_s, self.startup_s + sum(self.steps) + self.finish_s + self.restart_s)

    @property
    def typical_s(self) -> float:
        """The median planned step: what a step the plan did not foresee is taken to cost."""
        return statistics.median(self.steps) if self.steps else 0.0

    def step_s(self, k: int) -> float:
        """Planned seconds of step k (from 0); a step beyond the plan's (a job that found more to do) counts
        as its average step."""
        if k < len(self.steps):
            return self.steps[k]
        return sum(self.steps) / len(self.steps) if self.steps else 0.0

    def work(self, done: float) -> float:
        """Planned seconds of the first `done` steps (a fraction counts that share of the next step)."""
        return self.work_between(0.0, done)

    def work_between(self, lo: float, hi: float, pace_of: Callable[[int], float] | None = None) -> float:
        """Planned seconds from `lo` steps done to `hi`, each step's taken at `pace_of(k)` (None: 1)."""
        lo = max(0.0, lo)
        seconds, k = 0.0, math.floor(lo)
        while k < hi:
            share = min(hi, k + 1) - max(lo, k)
            seconds += share * self.step_s(k) * (1.0 if pace_of is None else pace_of(k))
            k += 1
        return seconds


def plan_to_json(plan: WorkPlan, **about: str) -> dict[str, Any]:
    """The plan as stored on the job, with what it is about (a calibration's candidate family)."""
    lists = {"steps": list(plan.steps), "threads": list(plan.threads), "batches": list(plan.batches)}
    return {**asdict(plan), **lists, **about}


def plan_from_json(data: Any, limit_s: float) -> WorkPlan:
    """A stored plan; a job stored before plans existed runs to its time limit, as far as anyone knows."""
    if not isinstance(data, dict):
        return WorkPlan(CHILD_START_S, (max(0.0, limit_s - CHILD_START_S),), 0.0, limit_s)
    budget = data.get("steps_budget_s")
    return WorkPlan(
        float(data["startup_s"]),
        tuple(float(s) for s in data["steps"]),
        float(data["finish_s"]),
        float(data["limit_s"]),
        None if budget is None else float(budget),
        float(data.get("restart_chance") or 0.0),
        restart_step_s=None if data.get("restart_step_s") is None else float(data["restart_step_s"]),
        threads=tuple(int(t) for t in data.get("threads") or ()),
        batches=tuple(int(b) for b in data.get("batches") or ()),
    )


@dataclass(frozen=True)
class Mark:
    """A progress event that changed the count of finished steps."""

    at_s: float  # seconds since the job started
    done: float  # steps finished (a fraction for a job that reports one, such as a probe's share of time)
    total: float  # steps the job expects in all, as it now knows
    restart: bool = False  # the job announced a new child (a calibration's re-measure): a start-up is next
    # how likely that second child is, as the job now sees it (a calibration's system-time share so far
    # against its threshold); None: the plan's chance stands
    restart_chance: float | None = None
    threads: int | None = None  # the thread count of the step that starts here (a sweep's configuration)


# as stored on a job: [at_s, done, total], then, where anything follows, the restart flag (1 or 0), the
# chance (or null) and the thread count (or null)
StoredMark = list[float | None]


def marks_from_json(rows: Sequence[Sequence[float | None]]) -> list[Mark]:
    """A job's stored marks (StoredMark; older ones end after the flag or the chance)."""

    def at(m: Sequence[float | None], i: int) -> float | None:
        return m[i] if len(m) > i else None

    marks = []
    for m in rows:
        chance, threads = at(m, 4), at(m, 5)
        marks.append(
            Mark(
                float(m[0] or 0.0),
                float(m[1] or 0.0),
                float(m[2] or 0.0),
                bool(at(m, 3)),
                None if chance is None else float(chance),
                None if threads is None else int(threads),
            )
        )
    return marks


@dataclass(frozen=True)
class Remaining:
    seconds: float
    basis: str  # "plan": no step finished yet; "progress": paced by the finished steps; "limit": the cap
    pace: float  # median of taken / planned over the finished steps and the prior (1.0 until one finished)


def remaining(
    plan: WorkPlan, marks: Sequence[Mark], elapsed_s: float, *, prior_pace: float = 1.0
) -> Remaining:
    """Seconds the job has left after `elapsed_s` of running, from its plan and its marks so far."""
    left_in_limit = max(0.0, plan.limit_s - elapsed_s)
    if not marks:  # still starting: the whole plan is ahead, less what the start-up already took
        ahead = prior_pace * (sum(plan.steps) + plan.finish_s) + plan.restart_s
        seconds = max(0.0, plan.startup_s - elapsed_s) + ahead
        return _capped(seconds, left_in_limit, "plan", prior_pace)
    # a second child starts as this job's first did (its first mark: the interpreter, torch, the harness),
    # which varies with the host and its load more than any constant does
    plan = replace(plan, restart_startup_s=max(plan.restart_startup_s, marks[0].at_s))
    last = marks[-1]
    ratios = step_paces(plan, marks)
    pace = statistics.median([*ratios, prior_pace])  # the plan's own pace is one vote among the steps'
    pace_of = _paces_by_threads(plan, marks, pace)
    since = max(0.0, elapsed_s - last.at_s)  # the step under way has run this long already
    if last.restart:  # a new child was announced: its start-up, then the steps it counts, each a typical one
        start = plan.restart_startup_s
        ahead = max(0.0, start - since) + pace * plan.restart_step * max(0.0, last.total - last.done)
        since = max(0.0, since - start)
        current = pace * plan.restart_step
        steps_left = ahead - min(since, current)
    else:
        steps_left = _steps_left(plan, marks, elapsed_s, since, pace_of)
    # a second child still to come, until one is announced
    restart = (
        0.0
        if any(m.restart for m in marks)
        else restart_chance(plan, marks) * (plan.restart_startup_s + plan.restart_step)
    )
    seconds = steps_left + pace * plan.finish_s + restart
    return _capped(max(0.0, seconds), left_in_limit, "progress" if ratios else "plan", pace)


def _steps_left(
    plan: WorkPlan, marks: Sequence[Mark], elapsed_s: float, since: float, pace_of: Callable[[int], float]
) -> float:
    """Seconds of the step under way (`since` into it) and of those still to start, each at its pace. Within
    a steps' budget, a step starts only where the sweep expects it to end inside it (calibration.child's
    out_of_time: its latest step at that thread count, else its latest, scaled by the batch size)."""
    last = marks[-1]
    total = expected_total(plan, last)
    upto = min(total, math.floor(last.done) + 1)
    current = plan.work_between(last.done, upto, pace_of)
    left = current - min(since, current)
    if plan.steps_budget_s is None:
        return left + plan.work_between(upto, total, pace_of)
    took = _took(plan, marks)
    now = math.floor(last.done)
    if now < len(plan.batches):  # the step under way, as the sweep will have timed it
        took[plan.threads[now]] = took[None] = (plan.batches[now], current)
    clock = elapsed_s - marks[0].at_s + left  # the budget counts from the first step's start
    k = now + 1
    while k < total:
        step = plan.work_between(k, min(total, k + 1), pace_of)
        threads, batch = (plan.threads[k], plan.batches[k]) if k < len(plan.batches) else (None, None)
        seen = took.get(threads) or took.get(None)
        guess = seen[1] * batch / seen[0] if seen and batch else step
        if clock + guess > plan.steps_budget_s:
            break
        if batch:
            took[threads] = took[None] = (batch, step)
        clock, left, k = clock + step, left + step, k + 1
    return left


def _took(plan: WorkPlan, marks: Sequence[Mark]) -> dict[int | None, tuple[int, float]]:
    """The batch and seconds of the latest finished step at each thread count, and (None) of the latest,
    where the plan says which configurations its steps are (with_measured: the ones the sweep ran)."""
    took: dict[int | None, tuple[int, float]] = {}
    for a, b in itertools.pairwise(marks):
        k = math.floor(a.done)
        if b.done - a.done == 1 and a.done == k and k < len(plan.batches) and not (a.restart or b.restart):
            took[plan.threads[k]] = took[None] = (plan.batches[k], b.at_s - a.at_s)
    return took


def restart_chance(plan: WorkPlan, marks: Sequence[Mark]) -> float:
    """How likely a second child is now: by the chance the job's own figures give, once it reports one,
    else the plan's."""
    reported = marks[-1].restart_chance if marks else None
    return plan.restart_chance if reported is None else reported


def _paces_by_threads(plan: WorkPlan, marks: Sequence[Mark], pace: float) -> Callable[[int], float]:
    """Each step's pace: the median of the finished steps' at its thread count, the job's pace one vote
    among them; the job's pace where the plan has no thread counts or none finished at that one. On a box
    that got busy, steps on both cores stall behind the other work (2-thread steps 100-500x their plan
    beside two busy processes on 2 cores) while 1-thread steps keep about theirs; one pace for both fits
    neither (bench/results/queue_amd-epyc-2c_forecast-loaded/)."""
    seen: dict[int, list[float]] = {}
    for a, b in itertools.pairwise(marks):
        k = math.floor(a.done)
        planned = plan.step_s(k)
        # one whole step within one child, of the thread count the job said (else the plan's)
        threads = a.threads if a.threads is not None else plan.threads[k] if k < len(plan.threads) else None
        whole = b.done - a.done == 1 and a.done == k and not a.restart and not b.restart
        if whole and threads is not None and planned > 0:
            seen.setdefault(threads, []).append((b.at_s - a.at_s) / planned)
    paces = {t: statistics.median([*r, pace]) for t, r in seen.items()}

    now = marks[-1].threads if marks else None

    def pace_of(k: int) -> float:
        # the step under way runs on the threads the job said; those ahead, on the plan's
        threads = now if k == math.floor(marks[-1].done) and now is not None else None
        if threads is None and k < len(plan.threads):
            threads = plan.threads[k]
        return pace if threads is None else paces.get(threads, pace)

    return pace_of


def step_paces(plan: WorkPlan, marks: Sequence[Mark]) -> list[float]:
    """Seconds taken / planned of each stretch between two marks that finished work within one child (a
    stretch that ends in, or starts from, a new child's announcement holds a start-up, not steps)."""
    paces = []
    for a, b in itertools.pairwise(marks):
        planned = plan.work(b.done) - plan.work(a.done)
        if planned > 0 and not a.restart and not b.restart:
            paces.append((b.at_s - a.at_s) / planned)
    return paces


def expected_total(plan: WorkPlan, last: Mark) -> float:
    """How many steps the job will have run in all. A job's own count can be the whole grid it could try
    (a calibration's sweep counts every batch and thread count, then stops at its budget or a plateau the
    plan foresaw): within its plan, the plan's count rules; past it, the job's own count, which the steps'
    budget then bounds."""
    own = max(last.total, last.done)
    return own if last.done >= len(plan.steps) else min(own, len(plan.steps))


def _capped(seconds: float, left_in_limit: float, basis: str, pace: float) -> Remaining:
    if seconds >= left_in_limit:
        return Remaining(left_in_limit, "limit", pace)
    return Remaining(seconds, basis, pace)


def expected_duration(plan: WorkPlan, *, pace: float = 1.0) -> float:
    """A queued job's expected seconds from start to end: its plan at the device's recent pace."""
    return min(plan.limit_s, plan.startup_s + pace * (sum(plan.steps) + plan.finish_s) + plan.restart_s)


def device_pace(history: Sequence[tuple[float, float]], *, keep: int = 10) -> float:
    """The device's recent pace: the median of taken / expected seconds over its latest finished jobs
    (`history`: (expected, taken) pairs, newest last), 1.0 with none. A busier box than the estimates know,
    or a stopping rule that measures longer, shows here before it shows in any one job."""
    ratios = sorted(t / e for e, t in history[-keep:] if e > 0 and t > 0)
    if not ratios:
        return 1.0
    mid = len(ratios) // 2
    return ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2


# --- a calibration's sweep, planned as calibration/child.py runs it ----------------------------------------


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


# Measured on this machine's default calibrations (bench/results/queue_*, `bench queue --forecast`): from the
# claim to the first configuration (the plan, a fresh interpreter importing torch, the optimiser machinery
# preloaded: 6-10 s on the shared 2-core machine) and, per configuration, building the step and its batch,
# gathering batches from the data set and one tracked step for the live-tensor peak.
CHILD_START_S = 7.0
CONFIG_OVERHEAD_S = 0.15
FINISH_S = 0.5
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
    """One configuration: warm-up and one tracked step, then timed steps until both minimums are met."""
    timed = max(sweep.min_iterations * per_batch, sweep.min_seconds + per_batch)
    return CONFIG_OVERHEAD_S + (sweep.warmup + 1) * per_batch + timed


def sweep_work(sweep: SweepPlan, per_batch: Callable[[int, int], float]) -> WorkPlan:
    """The configurations the sweep will measure, as child.run_sweep picks them, with each one's expected
    seconds from `per_batch(batch, threads)` (the candidate's estimate): explicit batch sizes in full; a
    doubling sweep stops at the budget (a configuration expected to end after it is not started), at a
    predicted plateau, and drops thread counts predicted 25% slower than the best."""
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
                return _sweep_plan(sweep, steps, configs, doubling)
            steps.append(seconds)
            configs.append((batch, t))
            rates[t] = batch / max(per_batch(batch, t), 1e-12)
        if not doubling:
            continue
        active, best, flat = after_batch(rates, best, flat)
        if sweep.stop_on_plateau and flat >= PLATEAU_DOUBLINGS:
            break
    return _sweep_plan(sweep, steps, configs, doubling)


def _sweep_plan(
    sweep: SweepPlan, steps: list[float], configs: list[tuple[int, int]], doubling: bool
) -> WorkPlan:
    budget = sweep.budget_s if doubling else None  # explicit batch sizes are measured in full
    threads, batches = tuple(t for _, t in configs), tuple(b for b, _ in configs)
    return WorkPlan(
        CHILD_START_S, tuple(steps), FINISH_S, sweep.limit_s, budget, threads=threads, batches=batches
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
    re-measure's second child runs under the other), timed ones."""
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
    stands. Where the sweep stops (its plateau, its budget) stays the plan's: planning that again from the
    measured throughput was tried and left out, as a CNN's small batches are timed too noisily to say
    (bench/results/queue_amd-epyc-2c_forecast-measured/)."""
    measured = measured[: max(0, math.floor(marks[-1].done))] if marks else []
    sweep = sweep_from_json(stored)
    if sweep is None or not measured:
        return plan
    fastest = min(measured, key=lambda m: (m[3], m[2] / m[0]))  # reliable first, then seconds per example
    plan = replace(plan, restart_step_s=configuration_seconds(fastest[2], sweep))
    if sweep.batch_sizes or len(plan.batches) != len(plan.steps) or len(plan.threads) != len(plan.steps):
        return plan  # explicit batch sizes are measured in full; a plan stored without its configurations
    return _rebased(plan, measured, sweep.threads)


def _rebased(plan: WorkPlan, measured: Sequence[Timed], threads: Sequence[int]) -> WorkPlan:
    """with_measured's steps: what the doubling sweep measured, then what it will still measure. From its
    first whole batch size on, of the plan's batch sizes: the one under way at every thread count the sweep
    still times (`threads`, in its order), the later ones at those the plan foresaw there too, or that the
    sweep keeps for being measured unreliably (on a busy box, every one); before, the plan's own."""
    planned = dict(zip(zip(plan.batches, plan.threads, strict=True), plan.steps, strict=True))
    done = [(b, t) for b, t, _, _ in measured]
    current = done[-1][0]  # the batch size under way: its configurations may not all be measured yet
    whole = sorted({b for b, _ in done if b < current})
    ahead = [c for c in planned if c not in done]
    if whole:
        active, best, flat = set(threads), 0.0, 0
        keep: frozenset[int] = frozenset()
        for batch in whole:
            rows = [m for m in measured if m[0] == batch]
            rates = {t: b / max(s, 1e-12) for b, t, s, _ in rows}
            keep = frozenset(t for _, t, _, unreliable in rows if unreliable)
            kept, best, flat = after_batch(rates, best, flat, keep)
            active = set(kept)
        sizes = sorted({b for b in plan.batches if b >= current})
        ahead = [
            (b, t)
            for b in sizes
            for t in threads
            if t in active and (b, t) not in done and (b == current or (b, t) in planned or t in keep)
        ]
    # a configuration the plan dropped and the sweep did not: as the plan's other ones at that batch size
    at_batch = {b: s for (b, _), s in planned.items()}
    configs = [*done, *ahead]
    return replace(
        plan,
        steps=tuple(planned.get(c, at_batch.get(c[0], plan.typical_s)) for c in configs),
        threads=tuple(t for _, t in configs),
        batches=tuple(b for b, _ in configs),
    )


# --- the queue of a device ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Waiting:
    """A queued job of any kind on one device."""

    key: tuple[str, int]  # (kind, primary key)
    owner: int
    queued_at: float  # its creation, as a timestamp
    expected_s: float  # how long it will run once started
    first: bool = False  # a spread calibration's rank whose peers already run: it goes before everyone


@dataclass(frozen=True)
class Slot:
    key: tuple[str, int]
    position: int  # 1: next to start
    starts_in_s: float | None  # None: the device is drained, nothing starts until it is undrained


def fair_order(waiting: Sequence[Waiting], last_use: dict[int, float]) -> list[Waiting]:
    """The order a device takes its queued jobs: least-recent use between users. The next job is the oldest
    of the user whose last job on this device started longest ago (never: first; a tie: the user whose
    oldest queued job is older), and that user counts as using it now. So one user's ten queued jobs make
    another's first wait behind one of them at most. A spread rank whose peers already run goes first (they
    wait for it at the rendezvous)."""
    used = dict(last_use)
    pending = sorted(waiting, key=lambda w: (w.queued_at, w.key))
    order: list[Waiting] = []
    clock = max(used.values(), default=0.0)
    while pending:
        urgent = [w for w in pending if w.first]
        if urgent:
            chosen = urgent[0]
        else:
            chosen = min(pending, key=lambda w: (used.get(w.owner, -math.inf), w.queued_at, w.key))
        pending.remove(chosen)
        clock += 1.0
        used[chosen.owner] = clock
        order.append(chosen)
    return order


def forecast(
    waiting: Sequence[Waiting], last_use: dict[int, float], *, busy_for_s: float, drained: bool = False
) -> list[Slot]:
    """Each queued job's place in the device's fair-share order and its expected start in seconds from now:
    after the running job's remaining `busy_for_s` and the expected durations of the jobs before it."""
    slots, at = [], busy_for_s
    for position, w in enumerate(fair_order(waiting, last_use), start=1):
        slots.append(Slot(w.key, position, None if drained else at))
        at += w.expected_s
    return slots
