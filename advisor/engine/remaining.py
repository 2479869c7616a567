"""How long a device job has left, and how long a queued one will take: one estimator for both.

A job's `WorkPlan` says what it will do before it starts: a start-up (a child process importing torch), then
steps of work in order, each with its expected seconds (a calibration's configurations, from the sweep's
plan and the candidate's estimated time per batch; a probe's one budget), then a finishing tail; nothing
runs past its time limit. While it runs, its progress events become `Mark`s (when the count of finished
steps changed). `remaining()` paces the steps still to come by what the finished ones took against their
plan, so a machine slower or faster than the estimates (or a stopping rule that times a configuration for
longer or shorter than planned) is learned from the job's own progress as it comes, not assumed: the pace is
the median of each finished stretch's taken / planned seconds, the prior's one vote among them, so one
stalled configuration does not set the pace of the rest. A step that is slow says how long it still needs
(a Mark's `step_left_s`, from its own steps so far): the step under way is counted by that word, not taken
as done once its plan ran out.

No Django, no torch: the web pages, the API, the fleet page and bench queue call the same functions.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

# From the claim to a child's first step (the plan, a fresh interpreter importing torch, the optimiser
# machinery preloaded: 6-10 s on the shared 2-core machine, bench/results/queue_*), where nothing better is
# known: a plan stored before plans had their own start-up.
CHILD_START_S = 7.0


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
    # how likely a re-measure is after the steps (a calibration timing its fastest configuration again
    # under the tuned allocator when system time is significant): its step (and start-up), weighed
    restart_chance: float = 0.0
    # the re-measure's start-up: 0 where the sweep's own child re-measures (allocator.tune_in_process); a
    # plan stored while a second child did (the interpreter and torch again) has that child's start
    restart_startup_s: float = 0.0
    # the configuration the re-measure times (the sweep's fastest per example, known once it is measured:
    # sweepplan.with_measured); None: a typical step
    restart_step_s: float | None = None
    # each planned step's thread count and batch (a sweep's configurations); empty: one pace for every step
    threads: tuple[int, ...] = ()
    batches: tuple[int, ...] = ()

    @property
    def restart_s(self) -> float:
        """The expected seconds of a re-measure not yet announced (a second child's start-up is not paced)."""
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
        # plans stored before the field: a second child's start as then assumed
        restart_startup_s=float(data.get("restart_startup_s", 2.5) or 0.0),
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
    restart: bool = False  # the job announced its re-measure: that (after a start-up, where a child) is next
    # how likely that re-measure is, as the job now sees it (a calibration's system-time share so far
    # against its threshold); None: the plan's chance stands
    restart_chance: float | None = None
    threads: int | None = None  # the thread count of the step that starts here (a sweep's configuration)
    # how long the step that started here still needed, as it last said (a slow configuration, from its own
    # steps: calibration.child's ticks), and when it said so; None: it has not said
    step_left_s: float | None = None
    step_left_at_s: float | None = None


# as stored on a job: [at_s, done, total], then, where anything follows, the restart flag (1 or 0), the
# chance (or null), the thread count (or null), and the step's own word on what it still needs (seconds,
# said at)
StoredMark = list[float | None]


def marks_from_json(rows: Sequence[Sequence[float | None]]) -> list[Mark]:
    """A job's stored marks (StoredMark; older ones end after the flag or the chance)."""

    def at(m: Sequence[float | None], i: int) -> float | None:
        return m[i] if len(m) > i else None

    marks = []
    for m in rows:
        chance, threads, left, said = at(m, 4), at(m, 5), at(m, 6), at(m, 7)
        marks.append(
            Mark(
                float(m[0] or 0.0),
                float(m[1] or 0.0),
                float(m[2] or 0.0),
                bool(at(m, 3)),
                None if chance is None else float(chance),
                None if threads is None else int(threads),
                None if left is None or said is None else float(left),
                None if left is None or said is None else float(said),
            )
        )
    return marks


# The 90% range of the time that actually remained against the estimate (5th and 95th percentiles of
# actual / estimated) by the estimate's basis, over 18,507 ETA samples of the AMD host's 43 saved
# `bench queue --forecast` runs, quiet and loaded, replayed by today's estimator; on the Intel host's six
# held-out runs it held for 93% of the samples. Wide, because where a calibration's sweep stops (a plateau
# within the noise) and whether it re-measures decide much of a short job:
# bench/results/queue_intel-xeon-2c_forecast-steps/ (eta_range.py).
ETA_RATIOS: dict[str, tuple[float, float]] = {"plan": (0.49, 2.61), "progress": (0.34, 6.26)}
# The same for a queued job's expected start (the actual wait / the expected one, waits over a second) over
# the 387 queued jobs of those runs, as each run's estimator then predicted them (starts are not replayed);
# on the Intel host's six runs (54 starts, today's plans) it held for 52.
START_RATIOS = (0.69, 1.65)


def start_interval(starts_in_s: float) -> tuple[float, float]:
    """The 90% range of a queued job's wait, from its expected one."""
    low, high = START_RATIOS
    return starts_in_s * low, starts_in_s * high


# A step's pace is its thread count's latest, at most this many times the median of that count's
# (_paces_by_threads). Replayed over every saved `bench queue --forecast` run and three runs of explicit
# grids up to batch 2048 (quiet, and beside a busy loop): the grids' ETA samples within ±25% from 25% of
# the run went from 50% (the median) to 63%, the saved default sweeps' from 42% to 43%; uncapped, one
# stalled step priced a loaded LSTM's remaining steps 2.5x long (bench/results/queue_intel-xeon-2c_grid/).
LATEST_PACE_CAP = 2.0


@dataclass(frozen=True)
class Remaining:
    seconds: float
    basis: str  # "plan": no step finished yet; "progress": paced by the finished steps; "limit": the cap
    pace: float  # median of taken / planned over the finished steps and the prior (1.0 until one finished)
    # the 90% range of the time that will actually remain (ETA_RATIOS by basis), within the time limit
    low: float
    high: float


def remaining(
    plan: WorkPlan, marks: Sequence[Mark], elapsed_s: float, *, prior_pace: float = 1.0
) -> Remaining:
    """Seconds the job has left after `elapsed_s` of running, from its plan and its marks so far."""
    left_in_limit = max(0.0, plan.limit_s - elapsed_s)
    if not marks:  # still starting: the whole plan is ahead, less what the start-up already took
        ahead = prior_pace * (sum(plan.steps) + plan.finish_s) + plan.restart_s
        seconds = max(0.0, plan.startup_s - elapsed_s) + ahead
        return _capped(seconds, left_in_limit, "plan", prior_pace)
    # a second child (a plan stored while re-measures started one) starts as this job's first did (its first
    # mark: the interpreter, torch, the harness), which varies with the host and its load more than any
    # constant does (1.5-2.4 s on one host, 4.3-5.8 s on another: a floor from either is wrong on the other)
    if plan.restart_startup_s > 0:
        plan = replace(plan, restart_startup_s=marks[0].at_s)
    last = marks[-1]
    ratios = step_paces(plan, marks)
    pace = statistics.median([*ratios, prior_pace])  # the plan's own pace is one vote among the steps'
    pace_of = _paces_by_threads(plan, marks, pace)
    since = max(0.0, elapsed_s - last.at_s)  # the step under way has run this long already
    if last.restart:  # the re-measure was announced: its start-up (if any), then the steps it counts
        start = plan.restart_startup_s
        ahead = max(0.0, start - since) + pace * plan.restart_step * max(0.0, last.total - last.done)
        since = max(0.0, since - start)
        current = pace * plan.restart_step
        steps_left = ahead - min(since, current)
    else:
        steps_left = _steps_left(plan, marks, elapsed_s, since, pace_of)
    # a re-measure still to come, until one is announced
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
    if last.step_left_s is not None and last.step_left_at_s is not None:
        # the step said how long it still needs, from its own steps: a stalled configuration is not done
        # when its plan ran out
        current = last.step_left_at_s - last.at_s + last.step_left_s
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
    where the plan says which configurations its steps are (sweepplan.with_measured: those the sweep ran)."""
    took: dict[int | None, tuple[int, float]] = {}
    for k, _, seconds in _whole_steps(marks):
        if k < len(plan.batches):
            took[plan.threads[k]] = took[None] = (plan.batches[k], seconds)
    return took


def _whole_steps(marks: Sequence[Mark]) -> Iterator[tuple[int, Mark, float]]:
    """Each stretch between two marks that is one whole step within one child: the step's index, the mark
    it started at and its seconds."""
    for a, b in itertools.pairwise(marks):
        k = math.floor(a.done)
        if b.done - a.done == 1 and a.done == k and not (a.restart or b.restart):
            yield k, a, b.at_s - a.at_s


def restart_chance(plan: WorkPlan, marks: Sequence[Mark]) -> float:
    """How likely a re-measure is now: by the chance the job's own figures give, once it reports one,
    else the plan's."""
    reported = marks[-1].restart_chance if marks else None
    return plan.restart_chance if reported is None else reported


def _paces_by_threads(plan: WorkPlan, marks: Sequence[Mark], pace: float) -> Callable[[int], float]:
    """Each step's pace: the latest finished step's at its thread count, capped at LATEST_PACE_CAP x the
    median of that count's (the job's pace one vote among them); the job's pace where the plan has no thread
    counts or none finished at that one. On a box that got busy, steps on both cores stall behind the other
    work (2-thread steps 100-500x their plan beside two busy processes on 2 cores) while 1-thread steps keep
    about theirs; one pace for both fits neither (bench/results/queue_amd-epyc-2c_forecast-loaded/)."""
    seen: dict[int, list[float]] = {}
    for k, start, seconds in _whole_steps(marks):
        planned = plan.step_s(k)
        # the thread count the job said it started on, else the plan's
        threads = (
            start.threads if start.threads is not None else plan.threads[k] if k < len(plan.threads) else None
        )
        if threads is not None and planned > 0:
            seen.setdefault(threads, []).append(seconds / planned)
    paces = {t: thread_pace(r, pace) for t, r in seen.items()}

    now = marks[-1].threads if marks else None

    def pace_of(k: int) -> float:
        # the step under way runs on the threads the job said; those ahead, on the plan's
        threads = now if k == math.floor(marks[-1].done) and now is not None else None
        if threads is None and k < len(plan.threads):
            threads = plan.threads[k]
        return pace if threads is None else paces.get(threads, pace)

    return pace_of


def thread_pace(taken: list[float], pace: float) -> float:
    """One thread count's pace from its finished steps' taken / planned, in the order they ran, and the
    job's pace. A sweep runs its batch sizes in increasing order and the estimates' error drifts with the
    batch (a CNN's batch 2048 took 1.4-2.1x its plan where its batch 32 took 0.8-0.9x): the nearest batch
    measured speaks for the next better than all of them; the cap keeps one stalled step from pricing the
    rest. (bench/results/queue_amd-epyc-2c_grid-budget/repriced.py replays other rules in its place.)"""
    return min(taken[-1], LATEST_PACE_CAP * statistics.median([*taken, pace]))


def step_paces(plan: WorkPlan, marks: Sequence[Mark]) -> list[float]:
    """Seconds taken / planned of each stretch between two marks that finished work within one child (a
    stretch that ends in, or starts from, a re-measure's announcement holds the re-measure, not the plan's
    steps)."""
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
    low, high = ETA_RATIOS[basis]
    if seconds >= left_in_limit:  # it will be stopped at its limit, or end before
        return Remaining(left_in_limit, "limit", pace, min(left_in_limit, seconds * low), left_in_limit)
    return Remaining(seconds, basis, pace, seconds * low, min(left_in_limit, seconds * high))


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
