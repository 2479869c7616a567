"""bench queue --from: a saved run's ETAs predicted again by today's estimator, from plans and marks."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from advisor.engine.remaining import Mark, WorkPlan, plan_to_json, remaining
from advisor.engine.sweepplan import SweepPlan, configuration_seconds, sweep_to_json, sweep_work
from bench.queue_forecast import Sweep, replay, score

PLAN = WorkPlan(startup_s=1.0, steps=(2.0, 2.0, 2.0), finish_s=0.0, limit_s=60.0)


def _job(
    pk: int, *, wait: float, duration: float, marks: list[list[float]], at: list[float]
) -> dict[str, Any]:
    return {
        "id": pk,
        "planned": plan_to_json(PLAN),
        "marks": marks,
        "actual_wait": wait,
        "duration": duration,
        "expected_wait": None,
        "eta": [
            {"elapsed_share": t / duration, "progress": 0.5, "predicted": -1.0, "actual": duration - t}
            for t in at
        ],
    }


def test_it_predicts_each_sample_from_the_marks_before_it_at_the_pace_of_jobs_done_before() -> None:
    # the first job took twice its plan (7 s planned): the second's prior pace is 2
    first = _job(1, wait=0.0, duration=14.0, marks=[[2.0, 0, 3], [6.0, 1, 3], [10.0, 2, 3]], at=[5.0, 11.0])
    second = _job(2, wait=14.0, duration=8.0, marks=[[1.0, 0, 3], [3.0, 1, 3], [5.0, 2, 3]], at=[2.0, 4.0])
    again = replay({"jobs": [first, second]})
    assert again["replayed"]
    a, b = again["jobs"]
    # at 5 s the first job has reported only its start (the mark at 6 s comes later)
    assert a["eta"][0]["predicted"] == pytest.approx(remaining(PLAN, [Mark(2.0, 0, 3)], 5.0).seconds)
    marks = [Mark(1.0, 0, 3), Mark(3.0, 1, 3)]
    assert b["eta"][1]["predicted"] == pytest.approx(remaining(PLAN, marks, 4.0, prior_pace=2.0).seconds)
    assert b["eta"][1]["predicted"] != pytest.approx(remaining(PLAN, marks, 4.0).seconds)
    assert score(again)["eta_from_25pct_of_run"]["n"] == 4


def test_it_prices_a_re_measure_from_the_configurations_each_sample_had_measured() -> None:
    sweep = SweepPlan((), (1,), 32, 512, 5, 0.5, 2, budget_s=100.0, limit_s=120.0)
    plan = replace(sweep_work(sweep, lambda b, t: 0.01 * b / 32), restart_chance=1.0)
    job = _job(1, wait=0.0, duration=9.0, marks=[[1.0, 0, 5], [2.0, 1, 5], [3.0, 2, 5]], at=[2.5, 3.5])
    job["planned"] = {**plan_to_json(plan), **sweep_to_json(sweep)}
    # 64 is the fastest per example by the second sample (by less than the 5% a doubling must gain, so the
    # sweep's plan stands); 128, faster still, came after it
    job["measured"] = [
        [32, 1, 0.01, "default", None],
        [64, 1, 0.0199, "default", None],
        [128, 1, 0.013, "default", None],
    ]
    (again,) = replay({"jobs": [job]})["jobs"]
    (before,) = replay({"jobs": [job]}, measured=False)["jobs"]
    marks = [Mark(1.0, 0, 5), Mark(2.0, 1, 5), Mark(3.0, 2, 5)]
    priced = replace(plan, restart_step_s=configuration_seconds(0.0199, sweep))
    assert again["eta"][1]["predicted"] == pytest.approx(remaining(priced, marks, 3.5).seconds)
    assert before["eta"][1]["predicted"] == pytest.approx(remaining(plan, marks, 3.5).seconds)
    assert again["eta"][1]["predicted"] != pytest.approx(before["eta"][1]["predicted"])


def test_a_slow_steps_word_counts_from_when_it_was_said() -> None:
    """The saved marks keep a step's latest word only: a sample reads the mark it polled, else the mark
    without a word said after it."""
    stalled = [[1.0, 0, 3], [3.0, 1, 3, 0, None, 2, 10.0, 6.0]]  # said at 6 s: 10 s more
    job = _job(1, wait=0.0, duration=18.0, marks=stalled, at=[5.0, 7.0, 8.0])
    job["eta"][2]["mark"] = [3.0, 1, 3, 0, None, 2, 12.0, 7.5]  # as polled at 8 s: 12 s more, said at 7.5
    a, b, c = replay({"jobs": [job]})["jobs"][0]["eta"]
    plain = [Mark(1.0, 0, 3), Mark(3.0, 1, 3, threads=2)]
    assert a["predicted"] == pytest.approx(remaining(PLAN, plain, 5.0).seconds)  # not yet said
    word = [plain[0], replace(plain[1], step_left_s=10.0, step_left_at_s=6.0)]
    assert b["predicted"] == pytest.approx(remaining(PLAN, word, 7.0).seconds)
    assert b["predicted"] > a["predicted"] + 5.0
    polled = [plain[0], replace(plain[1], step_left_s=12.0, step_left_at_s=7.5)]
    assert c["predicted"] == pytest.approx(remaining(PLAN, polled, 8.0).seconds)


def test_it_scores_the_eta_by_the_jobs_length() -> None:
    """+-25% of what remains is a fraction of a second near the end of a short job: each length apart."""
    short = _job(1, wait=0.0, duration=10.0, marks=[[1.0, 0, 3]], at=[3.0, 5.0, 9.0])
    long = _job(2, wait=10.0, duration=30.0, marks=[[1.0, 0, 3]], at=[10.0, 20.0])
    scores = score({"jobs": [short, long]})
    assert scores["eta_from_25pct_of_run"]["n"] == 5
    assert scores["eta_from_25pct_of_run_jobs_under_20s"]["n"] == 3
    assert scores["eta_from_25pct_of_run_jobs_20_to_60s"]["n"] == 2
    assert scores["eta_from_25pct_of_run_jobs_60s_or_more"] == {"n": 0}


@pytest.mark.parametrize(
    ("grid", "limit", "sweep"),
    [
        ("", None, Sweep()),  # the wizard's default calibration
        ("32,128,512:1,2", 300, Sweep((32, 128, 512), (1, 2), 300)),
        ("64,256:", 120, Sweep((64, 256), (), 120)),  # every thread count of the device
    ],
)
def test_a_grid_reads_as_batch_sizes_then_thread_counts(grid: str, limit: int | None, sweep: Sweep) -> None:
    assert Sweep.parse(grid, limit) == sweep
