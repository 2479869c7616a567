"""The remaining-time estimator, the sweep's work plan and the fair-share order: plain functions, each case a
row; the clock is the `elapsed_s` each row passes in."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.engine.fairshare import Waiting, fair_order, forecast
from advisor.engine.remaining import (
    ETA_RATIOS,
    Mark,
    WorkPlan,
    device_pace,
    expected_duration,
    marks_from_json,
    plan_from_json,
    plan_to_json,
    remaining,
)
from advisor.engine.sweepplan import (
    SweepPlan,
    Timed,
    configuration_seconds,
    first_child,
    sweep_from_json,
    sweep_to_json,
    sweep_work,
    with_measured,
)

# start-up 3 s, four steps of 2 s, 1 s to finish, limit 60 s: 12 s in all
PLAN = WorkPlan(startup_s=3.0, steps=(2.0, 2.0, 2.0, 2.0), finish_s=1.0, limit_s=60.0, restart_startup_s=3.0)
ON_PLAN = [Mark(3.0, 0, 4), Mark(5.0, 1, 4), Mark(7.0, 2, 4), Mark(9.0, 3, 4)]  # its four steps, as planned


@pytest.mark.parametrize(
    ("marks", "elapsed", "seconds", "basis"),
    [
        # not started its first step: the whole plan less the start-up already spent
        ([], 0.0, 12.0, "plan"),
        ([], 2.0, 10.0, "plan"),
        ([], 5.0, 9.0, "plan"),  # start-up overran: the steps and the finish are still ahead
        # first step began at 3 s; 1 s into it
        ([Mark(3.0, 0, 4)], 4.0, 8.0, "plan"),
        # on plan: two steps took 4 s -> pace 1, two steps and the finish left
        ([Mark(3.0, 0, 4), Mark(5.0, 1, 4), Mark(7.0, 2, 4)], 7.0, 5.0, "progress"),
        # twice as slow: two steps took 4 s each; the pace is the median of 2, 2 and the prior's 1
        ([Mark(3.0, 0, 4), Mark(7.0, 1, 4), Mark(11.0, 2, 4)], 11.0, 10.0, "progress"),
        # one stalled step does not set the pace of the rest: median of 1, 1, 5 and 1
        ([Mark(3.0, 0, 4), Mark(5.0, 1, 4), Mark(7.0, 2, 4), Mark(17.0, 3, 4)], 17.0, 3.0, "progress"),
        # the sweep dropped two planned steps (total 2): only the finish is left
        ([Mark(3.0, 0, 4), Mark(5.0, 1, 4), Mark(7.0, 2, 2)], 7.0, 1.0, "progress"),
        # its own count is the whole grid it could try (6): within its plan, the plan's count rules
        ([Mark(3.0, 0, 4), Mark(5.0, 1, 6)], 5.0, 7.0, "progress"),
        # past its plan, its own count rules: two more steps at the average, then the finish
        ([*ON_PLAN, Mark(11.0, 4, 6)], 11.0, 5.0, "progress"),
        # a second child announced (a re-measure of two): its start-up, two typical steps, the finish
        ([*ON_PLAN, Mark(11.0, 4, 6, restart=True)], 11.0, 8.0, "progress"),
        ([*ON_PLAN, Mark(11.0, 4, 6, restart=True)], 15.0, 4.0, "progress"),
        # a first child that took 5 s to start: the second is expected to take as long
        (
            [Mark(5.0, 0, 4), *(Mark(5.0 + 2 * i, i, 4) for i in (1, 2, 3)), Mark(13.0, 4, 6, restart=True)],
            13.0,
            10.0,
            "progress",
        ),
        # the last step stalled 7 s into its planned 2: without a word only the finish is left; with the
        # step's own (20 s more, said 2 s ago) those 18 s too
        ([*ON_PLAN[:3], Mark(9.0, 3, 4)], 16.0, 1.0, "progress"),
        ([*ON_PLAN[:3], Mark(9.0, 3, 4, step_left_s=20.0, step_left_at_s=14.0)], 16.0, 19.0, "progress"),
        # nothing past the limit
        ([Mark(3.0, 0, 4)], 57.0, 3.0, "limit"),
    ],
)
def test_it_paces_the_rest_by_the_steps_so_far(
    marks: list[Mark], elapsed: float, seconds: float, basis: str
) -> None:
    left = remaining(PLAN, marks, elapsed)
    assert left.seconds == pytest.approx(seconds)
    assert left.basis == basis


def test_no_step_starts_that_would_end_past_the_steps_budget() -> None:
    """As a sweep decides (calibration.child's out_of_time): the budget of 7 s from the first step's start
    (3 s) ends at 10 s, and a step expected to end after it does not start."""
    budgeted = WorkPlan(3.0, (2.0, 2.0, 2.0, 2.0), 1.0, 60.0, steps_budget_s=7.0)
    # past its plan with a count of 6: the budget ended at 10 s, so only the step under way is left
    assert remaining(budgeted, [*ON_PLAN, Mark(11.0, 4, 6)], 11.0).seconds == pytest.approx(2.0 + 1.0)
    # 1 s into the third step (ends at 9 s): the fourth would end at 11 s, past the budget
    assert remaining(budgeted, ON_PLAN[:3], 8.0).seconds == pytest.approx(1.0 + 1.0)
    # the second step starts at 5 s: it and the third end by 9 s
    assert remaining(budgeted, ON_PLAN[:2], 5.0).seconds == pytest.approx(4.0 + 1.0)
    # at a slower pace (each step 3 s): the second ends at 8 s, the third would end at 11 s
    slow = [Mark(3.0, 0, 4), Mark(6.0, 1, 4)]
    assert remaining(budgeted, slow, 6.0, prior_pace=1.5).seconds == pytest.approx(3.0 + 1.5)


def test_it_takes_what_the_current_step_ran_off_the_rest_but_never_more_than_the_step() -> None:
    marks = [Mark(3.0, 0, 4), Mark(5.0, 1, 4)]
    at_mark = remaining(PLAN, marks, 5.0).seconds
    assert remaining(PLAN, marks, 6.0).seconds == pytest.approx(at_mark - 1.0)
    # the step ran long: what is left is the steps after it, not less
    assert remaining(PLAN, marks, 20.0).seconds == pytest.approx(
        remaining(PLAN, [*marks, Mark(7, 2, 4)], 7.0).seconds
    )


def test_it_counts_a_fraction_of_a_step_for_jobs_that_report_one() -> None:
    probe = WorkPlan(4.0, (100.0,), 1.0, 110.0)
    # a probe at 40% of its 100 s after 44 s (4 s start-up): on plan
    left = remaining(probe, [Mark(4.0, 0.0, 1), Mark(44.0, 0.4, 1)], 44.0)
    assert left.seconds == pytest.approx(61.0)


@pytest.mark.parametrize(
    ("marks", "elapsed", "basis"),
    [
        ([], 0.5, "plan"),  # still starting
        ([Mark(1.0, 0, 3), Mark(3.0, 1, 3)], 4.0, "progress"),
        ([Mark(1.0, 0, 3), Mark(3.0, 1, 3)], 58.0, "limit"),  # 2 s of its limit left
    ],
)
def test_each_estimate_carries_its_90_percent_range_by_its_basis_within_the_limit(
    marks: list[Mark], elapsed: float, basis: str
) -> None:
    left = remaining(PLAN, marks, elapsed)
    assert left.basis == basis
    if basis == "limit":  # stopped at its limit, or ending before
        assert left.high == left.seconds == pytest.approx(2.0) and 0 < left.low < left.high
    else:
        low, high = ETA_RATIOS[basis]
        assert (left.low, left.high) == pytest.approx((left.seconds * low, left.seconds * high))
        assert left.low < left.seconds < left.high


def test_its_estimate_falls_steadily_on_a_job_that_runs_as_planned() -> None:
    """Issue 24: a 17 s job's ETA climbed 83 -> 96 -> 110 s. With a plan, an on-plan job's estimate only
    falls, and is right throughout."""
    plan = WorkPlan(3.0, (1.0, 1.5, 2.0, 3.0, 4.0), 0.5, 120.0)
    ends = [3.0, 4.0, 5.5, 7.5, 10.5, 14.5]
    estimates = []
    for done, at in enumerate(ends[:-1]):
        marks = [Mark(ends[i], i, 5) for i in range(done + 1)]
        estimates.append(remaining(plan, marks, at).seconds)
    assert estimates == sorted(estimates, reverse=True)
    assert estimates == pytest.approx([15.0 - at for at in ends[:-1]])


@pytest.mark.parametrize(
    ("history", "pace"),
    [([], 1.0), ([(10.0, 12.0)], 1.2), ([(10.0, 5.0), (10.0, 20.0), (10.0, 10.0)], 1.0), ([(0.0, 3.0)], 1.0)],
)
def test_it_learns_the_device_pace_from_finished_jobs(
    history: list[tuple[float, float]], pace: float
) -> None:
    assert device_pace(history) == pytest.approx(pace)


def test_a_queued_job_takes_its_plan_at_the_device_pace_within_its_limit() -> None:
    assert expected_duration(PLAN) == pytest.approx(12.0)
    assert expected_duration(PLAN, pace=2.0) == pytest.approx(3.0 + 18.0)
    assert expected_duration(PLAN, pace=10.0) == pytest.approx(60.0)


SWEEP = SweepPlan(
    batch_sizes=(),
    threads=(1, 2),
    batch_start=32,
    max_batch_size=512,
    min_iterations=5,
    min_seconds=0.5,
    warmup=2,
    budget_s=15.0,
    limit_s=120.0,
)


def test_a_doubling_sweep_stops_at_a_predicted_plateau_and_drops_slow_thread_counts() -> None:
    # one thread twice as fast as two; throughput flat from batch 64 on
    def per_batch(batch: int, threads: int) -> float:
        return (0.001 if batch <= 32 else 0.002 * batch / 64) * threads

    plan = sweep_work(SWEEP, per_batch)
    # batch 32 at 1 and 2 threads, then 1 thread only: 64, 128, then the plateau (two doublings flat)
    assert len(plan.steps) == 2 + 2
    assert plan.steps[0] == pytest.approx(configuration_seconds(0.001, SWEEP))


def test_a_doubling_sweep_starts_no_configuration_past_its_budget() -> None:
    plan = sweep_work(SWEEP, lambda batch, threads: 0.5 * batch / 32)
    assert sum(plan.steps) <= SWEEP.budget_s
    assert len(plan.steps) >= 1
    assert len(plan.batches) == len(plan.threads) == len(plan.steps)  # what each step is, as in full


def test_explicit_batch_sizes_are_measured_in_full_within_the_budget() -> None:
    sweep = SweepPlan((16, 32), (1,), 32, 512, 5, 0.5, 2, budget_s=80.0, limit_s=120.0)
    plan = sweep_work(sweep, lambda b, t: 0.01)
    assert len(plan.steps) == 2
    # the child asks out_of_time before each configuration of a grid too (child._measure_plan)
    assert plan.steps_budget_s == 80.0


def test_a_grid_whose_two_thread_step_stalled_stops_at_its_budget() -> None:
    """Batch 32 and 64 at 1 and 2 threads, each planned at 1.34 s, a budget of 20 s; beside busy processes
    the 2-thread step at 32 took 15 s. The one at 64 (guessed at 15 s x 64 / 32) would end past the budget,
    so the child stops before it: what is left is the 1-thread step under way and the job's finish."""
    sweep = SweepPlan((32, 64), (1, 2), 32, 512, 5, 0.5, 2, budget_s=20.0, limit_s=120.0)
    plan = sweep_work(sweep, lambda b, t: 0.1)
    assert plan.batches == (32, 32, 64, 64)
    marks = [Mark(1.0, 0, 4, threads=1), Mark(2.34, 1, 4, threads=2), Mark(17.34, 2, 4, threads=1)]
    left = remaining(plan, marks, 17.84).seconds
    assert left == pytest.approx(plan.steps[2] - 0.5 + plan.finish_s)


# one thread, batch 32 to 512, a budget no row reaches
ONE = SweepPlan((), (1,), 32, 512, 5, 0.5, 2, budget_s=100.0, limit_s=120.0)


def _gaining(batch: int, threads: int) -> float:
    return 0.001 * (batch / 32) ** 0.5  # throughput rises by 41% a doubling: no plateau


@pytest.mark.parametrize(
    ("measured", "done", "step"),
    [
        # nothing measured: a typical step of the plan
        ([], 0, None),
        # the fastest per example, 128: fewest seconds per example
        ([(32, 1, 0.001, False), (64, 1, 0.0015, False), (128, 1, 0.0021, False)], 3, 0.0021),
        # ... among the reliable ones, where there are any
        ([(32, 1, 0.001, False), (64, 1, 0.0015, False), (128, 1, 0.0021, True)], 3, 0.0015),
        # a row measured after the latest mark's count is not counted yet
        ([(32, 1, 0.001, False), (64, 1, 0.0015, False), (128, 1, 0.0021, False)], 2, 0.0015),
    ],
)
def test_a_re_measure_is_priced_as_the_fastest_configuration_measured_not_a_typical_step(
    measured: list[Timed], done: int, step: float | None
) -> None:
    plan = sweep_work(ONE, _gaining)
    marks = [Mark(1.0, done, 5)]
    again = with_measured(plan, sweep_to_json(ONE), measured, marks)
    if step is None:
        assert again == plan and again.restart_step == plan.typical_s
    else:
        assert again.restart_step_s == pytest.approx(configuration_seconds(step, ONE))
        assert again.steps == plan.steps  # the sweep's own plan stands


# 1 and 2 threads, batch 32 to 256, a budget no row reaches; the profile sees no thread count to drop
BOTH = SweepPlan((), (1, 2), 32, 256, 5, 0.5, 2, budget_s=100.0, limit_s=120.0)


def test_the_plan_follows_the_configurations_the_sweep_ran_and_drops_the_thread_counts_it_dropped() -> None:
    plan = sweep_work(BOTH, _gaining)
    assert list(zip(plan.batches, plan.threads, strict=True)) == [
        (b, t) for b in (32, 64, 128, 256) for t in (1, 2)
    ]
    # measured: 2 threads took 3x one thread's time at batch 32, so the sweep times one thread from 64 on
    measured: list[Timed] = [(32, 1, 0.001, False), (32, 2, 0.003, False), (64, 1, 0.0014, False)]
    again = with_measured(plan, sweep_to_json(BOTH), measured, [Mark(1.0, 3, 8)])
    assert list(zip(again.batches, again.threads, strict=True)) == [
        (32, 1),
        (32, 2),
        (64, 1),
        (128, 1),
        (256, 1),
    ]
    by_config = dict(zip(zip(plan.batches, plan.threads, strict=True), plan.steps, strict=True))
    assert again.steps == tuple(by_config[c] for c in zip(again.batches, again.threads, strict=True))
    # measured unreliably: no ground to drop 2 threads
    doubtful: list[Timed] = [(32, 1, 0.001, False), (32, 2, 0.003, True), (64, 1, 0.0014, False)]
    kept = with_measured(plan, sweep_to_json(BOTH), doubtful, [Mark(1.0, 3, 8)])
    assert len(kept.steps) == len(plan.steps)


ONE_TO_1024 = SweepPlan((), (1,), 32, 1024, 5, 0.5, 2, budget_s=100.0, limit_s=120.0)


@pytest.mark.parametrize(
    ("per_batch", "batches"),
    [
        # each doubling gained 41%: the plan's batch sizes stand
        ([0.001, 0.0014, 0.002], (32, 64, 128, 256, 512, 1024)),
        # 128 gained nothing over 64 (one doubling short of a plateau): the next one only
        ([0.001, 0.0014, 0.0028], (32, 64, 128, 256)),
        # 64 and 128 gained nothing: a plateau, the sweep has stopped
        ([0.001, 0.002, 0.004], (32, 64, 128)),
    ],
)
def test_a_batch_size_measured_in_full_decides_what_the_sweep_still_times(
    per_batch: list[float], batches: tuple[int, ...]
) -> None:
    """The plan foresaw a gain at every doubling (no plateau up to 1,024); the sweep decides by the rates it
    measured (after_batch, two doublings under 5% stop it), and the plan follows once a batch size is
    measured in full."""
    plan = sweep_work(ONE_TO_1024, _gaining)
    assert plan.batches == (32, 64, 128, 256, 512, 1024)
    measured: list[Timed] = [(32 * 2**i, 1, s, False) for i, s in enumerate(per_batch)]
    again = with_measured(plan, sweep_to_json(ONE_TO_1024), measured, [Mark(1.0, 3, 6)])
    assert again.batches == batches


@pytest.mark.parametrize(
    ("sweep", "batches"),
    [
        # 64 and 128 gained 40% each: two doublings more, as a plateau needs
        (ONE_TO_1024, (32, 64, 128, 256, 512)),
        # ... up to the sweep's largest batch
        (ONE, (32, 64, 128, 256, 512)),
        (replace(ONE, max_batch_size=256), (32, 64, 128, 256)),
        # a sweep that does not stop at a plateau goes on to its largest batch
        (replace(ONE_TO_1024, stop_on_plateau=False), (32, 64, 128, 256, 512, 1024)),
    ],
)
def test_a_gain_the_plan_did_not_foresee_counts_the_doublings_the_sweep_still_runs(
    sweep: SweepPlan, batches: tuple[int, ...]
) -> None:
    """The plan foresaw a plateau from batch 32 (throughput flat) and ends at 128; the sweep measured a gain
    at each doubling, so it will double until two in a row gain nothing: those are counted, each priced
    from the latest measured seconds per batch scaled by its batch size."""
    plan = sweep_work(replace(sweep, stop_on_plateau=True), lambda batch, threads: 0.001 * batch / 32)
    assert plan.batches == (32, 64, 128)
    measured: list[Timed] = [(32, 1, 0.001, False), (64, 1, 0.0014, False), (128, 1, 0.002, False)]
    again = with_measured(plan, sweep_to_json(sweep), measured, [Mark(1.0, 3, 6)])
    assert again.batches == batches
    assert again.steps[:3] == plan.steps  # what ran, at its planned seconds (the marks pace them)
    past = [configuration_seconds(0.002 * b / 128, sweep) for b in batches[3:]]
    assert again.steps[3:] == pytest.approx(past)


def test_a_thread_count_the_plan_dropped_and_a_busy_sweep_keeps_is_counted() -> None:
    """The profile has 2 threads twice as slow, so the plan drops them after batch 32; on a busy box every
    configuration is unreliable, so the sweep keeps timing them (calibration.child's `doubtful`)."""
    plan = sweep_work(BOTH, lambda batch, threads: _gaining(batch, threads) * threads)
    assert list(zip(plan.batches, plan.threads, strict=True)) == [
        (32, 1),
        (32, 2),
        (64, 1),
        (128, 1),
        (256, 1),
    ]
    busy: list[Timed] = [(32, 1, 0.001, True), (32, 2, 0.1, True), (64, 1, 0.0014, True)]
    again = with_measured(plan, sweep_to_json(BOTH), busy, [Mark(1.0, 3, 8)])
    configs = list(zip(again.batches, again.threads, strict=True))
    assert configs == [(32, 1), (32, 2), (64, 1), (64, 2), (128, 1), (128, 2), (256, 1), (256, 2)]
    # each as the plan's configuration at that batch size
    assert again.steps[3] == plan.steps[2] and again.steps[-1] == plan.steps[-1]


def test_a_step_the_sweep_expects_to_end_past_its_budget_is_not_counted() -> None:
    """As calibration.child's out_of_time decides: from its latest step at that thread count, scaled by the
    batch size. 2-thread steps stalled at 6 s (beside busy processes) where 1-thread ones took 1 s, as
    planned; the budget (20 s) ends at 21 s."""
    plan = WorkPlan(
        1.0,
        (1.0,) * 6,
        0.0,
        120.0,
        steps_budget_s=20.0,
        threads=(1, 2) * 3,
        batches=(32, 32, 64, 64, 128, 128),
    )
    marks = [Mark(1.0, 0, 6, threads=1), Mark(2.0, 1, 6, threads=2), Mark(8.0, 2, 6, threads=1)]
    # at 8 s: 64 at 1 thread (1 s) ends at 9 s; 64 at 2 threads, guessed at 6 s x 64 / 32 = 12 s, would end
    # at 21 s, inside the budget: it starts, taking the latest 2-thread step's pace (6, within twice the
    # median of 6 and the job's pace: 3.5); 128 at 1 thread ends at 16 s; 128 at 2 threads, guessed 6 x 2,
    # would end at 28 s, past the budget
    left = remaining(plan, marks, 8.0).seconds
    assert left == pytest.approx(1.0 + 6.0 + 1.0)
    # had the first 2-thread step taken 8 s, the next is guessed at 16 s: from 10 s, it would end at 26 s,
    # past the budget, so the sweep stops after the step under way
    late = [*marks[:2], Mark(10.0, 2, 6, threads=1)]
    assert remaining(plan, late, 10.0).seconds == pytest.approx(1.0)


def test_a_plan_without_its_sweep_stands() -> None:
    assert with_measured(PLAN, {"steps": [2.0]}, [(32, 1, 0.001, False)], [Mark(1.0, 1, 4)]) == PLAN


def test_a_stored_sweep_reads_back_as_it_was_planned() -> None:
    assert sweep_from_json(sweep_to_json(ONE)) == ONE
    assert sweep_from_json({"steps": [2.0]}) is None
    assert sweep_from_json(None) is None


def test_the_first_child_is_the_first_rows_allocator_and_its_timed_rows() -> None:
    rows = [
        (32, 1, 0.01, "default", None),
        (64, None, None, "default", None),  # out of memory: not timed
        (128, 2, 0.03, "default", True),
        (128, 2, 0.02, "tuned", None),  # the re-measure's second child
    ]
    assert first_child(rows) == [(32, 1, 0.01, False), (128, 2, 0.03, True)]


def _w(owner: int, at: float, pk: int, *, first: bool = False, seconds: float = 10.0) -> Waiting:
    return Waiting(("calibration", pk), owner, at, seconds, first)


@pytest.mark.parametrize(
    ("waiting", "last_use", "order"),
    [
        # one user: first in, first out
        ([_w(1, 0, 1), _w(1, 1, 2)], {}, [1, 2]),
        # A queued three, then B one: B's goes second, after one of A's
        ([_w(1, 0, 1), _w(1, 1, 2), _w(1, 2, 3), _w(2, 3, 4)], {}, [1, 4, 2, 3]),
        # A used the device last: B and C go before A's next, the one who waited longest first
        ([_w(1, 0, 1), _w(2, 2, 2), _w(3, 1, 3)], {1: 100.0, 2: 50.0, 3: 60.0}, [2, 3, 1]),
        # a spread rank whose peers run goes first
        ([_w(1, 0, 1), _w(2, 1, 2, first=True)], {}, [2, 1]),
    ],
)
def test_it_serves_users_in_turn(
    waiting: list[Waiting], last_use: dict[int, float], order: list[int]
) -> None:
    assert [w.key[1] for w in fair_order(waiting, last_use)] == order


def test_a_forecast_adds_the_running_jobs_rest_and_the_jobs_before() -> None:
    waiting = [_w(1, 0, 1, seconds=10), _w(1, 1, 2, seconds=20), _w(2, 2, 3, seconds=5)]
    slots = forecast(waiting, {}, busy_for_s=7.0)
    assert [(s.key[1], s.position, s.starts_in_s) for s in slots] == [(1, 1, 7.0), (3, 2, 17.0), (2, 3, 22.0)]
    assert all(s.starts_in_s is None for s in forecast(waiting, {}, busy_for_s=7.0, drained=True))


def test_a_second_child_counts_by_its_chance_until_it_is_announced() -> None:
    maybe = WorkPlan(
        3.0, (2.0, 2.0, 2.0, 2.0), 1.0, 60.0, restart_chance=0.5, restart_startup_s=3.0
    )  # 0.5 x 5 s
    assert maybe.expected_s == pytest.approx(12.0 + 2.5)
    assert remaining(maybe, ON_PLAN[:3], 7.0).seconds == pytest.approx(5.0 + 2.5)
    # announced: its start-up and its steps in full, the chance no more
    announced = [*ON_PLAN, Mark(11.0, 4, 5, restart=True)]
    assert remaining(maybe, announced, 11.0).seconds == pytest.approx(3.0 + 2.0 + 1.0)


def test_a_re_measure_in_the_sweeps_own_child_counts_its_step_and_no_start_up() -> None:
    """The sweep's child switches its allocator and times the fastest configuration again: one more step,
    no interpreter or torch to start (a plan's restart_startup_s is 0 from then on)."""
    maybe = WorkPlan(3.0, (2.0, 2.0, 2.0, 2.0), 1.0, 60.0, restart_chance=0.5)
    assert maybe.restart_startup_s == 0.0
    assert maybe.expected_s == pytest.approx(12.0 + 0.5 * 2.0)  # a typical step, by its chance
    assert remaining(maybe, ON_PLAN[:3], 7.0).seconds == pytest.approx(5.0 + 1.0)
    announced = [*ON_PLAN, Mark(11.0, 4, 5, restart=True)]
    assert remaining(maybe, announced, 11.0).seconds == pytest.approx(2.0 + 1.0)  # its step, the finish
    assert plan_from_json(plan_to_json(maybe), 60.0).restart_startup_s == 0.0  # stored as planned


@pytest.mark.parametrize("first_start", [1.5, 3.0, 5.5])
def test_an_announced_second_child_starts_as_long_as_the_jobs_first_did(first_start: float) -> None:
    """Its start-up is the first child's (the job's first mark), shorter or longer than the plan's 3 s: a
    fixed floor put every re-measure late on a host whose children start in 1.5-2.4 s."""
    marks = [Mark(first_start + 2.0 * k, k, 4) for k in range(5)]
    announced = [*marks, Mark(first_start + 8.0, 4, 5, restart=True)]
    # its start-up, its one step at the plan's 2 s, the 1 s finish
    assert remaining(PLAN, announced, first_start + 8.0).seconds == pytest.approx(first_start + 2.0 + 1.0)


def test_a_stored_plan_keeps_its_second_childs_start_up() -> None:
    stored = WorkPlan(1.8, (2.0,), 0.02, 60.0, restart_chance=0.5, restart_startup_s=1.8)
    assert plan_from_json(plan_to_json(stored), 60.0) == stored
    older = {k: v for k, v in plan_to_json(stored).items() if k != "restart_startup_s"}
    assert plan_from_json(older, 60.0).restart_startup_s == 2.5  # a plan stored before: the default


@pytest.mark.parametrize(("chance", "restart"), [(None, 2.5), (0.0, 0.0), (0.4, 2.0), (1.0, 5.0)])
def test_a_second_child_counts_by_the_chance_the_job_reports_once_it_reports_one(
    chance: float | None, restart: float
) -> None:
    """A calibration's sweep reports how likely its re-measure looks from its system time so far: that
    chance replaces the plan's (0.5 x 5 s here) in what is left."""
    maybe = WorkPlan(3.0, (2.0, 2.0, 2.0, 2.0), 1.0, 60.0, restart_chance=0.5, restart_startup_s=3.0)
    marks = [*ON_PLAN[:2], Mark(7.0, 2, 4, restart_chance=chance)]
    assert remaining(maybe, marks, 7.0).seconds == pytest.approx(5.0 + restart)


def test_stored_marks_keep_the_reported_chance_and_threads_and_read_older_marks_as_before() -> None:
    rows: list[list[float | None]] = [
        [3.0, 0, 4],
        [5.0, 1, 4, 0, 0.25],
        [7.0, 2, 4, 1],
        [9.0, 3, 4, 1, 1.0],
        [10.0, 3, 4, 0, None, 2],
        [11.0, 4, 4, 0, 0.5, 1],
    ]
    assert marks_from_json(rows) == [
        Mark(3.0, 0, 4),
        Mark(5.0, 1, 4, restart=False, restart_chance=0.25),
        Mark(7.0, 2, 4, restart=True),
        Mark(9.0, 3, 4, restart=True, restart_chance=1.0),
        Mark(10.0, 3, 4, threads=2),
        Mark(11.0, 4, 4, restart_chance=0.5, threads=1),
    ]
