"""The child's sweep logic, run in this process (the same code the spawned child runs, without the spawn)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.calibration import JobPlan
from advisor.calibration.child import batch_plan, run_sweep
from advisor.calibration.runner import child_payload
from tests.calibration import candidates as C


class Sink(list[dict[str, Any]]):
    def put(self, obj: dict[str, Any]) -> None:
        self.append(obj)


def test_it_plans_doubling_from_the_engines_batch_up_to_the_cap() -> None:
    payload = child_payload(JobPlan(C.ffn(), max_batch_size=100))  # training.batch_size is 16
    assert batch_plan(payload) == ([16, 32, 64], True)
    explicit = child_payload(JobPlan(C.ffn(), batch_sizes=[64, 8, 64]))
    assert batch_plan(explicit) == ([8, 64], False)


def test_it_resolves_threads_to_one_through_the_physical_cores() -> None:
    import psutil

    cores = psutil.cpu_count(logical=False) or 1
    assert child_payload(JobPlan(C.ffn()))["threads"] == list(range(1, cores + 1))


def test_it_stops_a_doubling_sweep_at_its_budget() -> None:
    plan = JobPlan(
        C.cnn(),
        threads=[1],
        min_iterations=2,
        min_seconds=0.3,
        warmup=1,
        sweep_budget_s=0.5,
        stop_on_plateau=False,
    )
    sink = Sink()
    run_sweep(child_payload(plan), sink)
    results = [e for e in sink if e["type"] == "result"]
    done = sink[-1]
    assert done["type"] == "done"
    assert done["stop_reason"].startswith("sweep budget: batch ")
    assert 1 <= len(results) < 8  # 16 .. 4096 would be 9 batch sizes
    assert done["done"] == len(results) < done["total"]


def test_it_measures_an_explicit_grid_in_full_with_progress_before_each() -> None:
    plan = JobPlan(C.ffn(), batch_sizes=[4, 8], threads=[1, 2], min_iterations=2, min_seconds=0.0, warmup=0)
    sink = Sink()
    run_sweep(child_payload(plan), sink)
    kinds = [e["type"] for e in sink]
    assert kinds == ["progress", "result"] * 4 + ["done"]
    assert [(e["batch_size"], e["threads"]) for e in sink if e["type"] == "result"] == [
        (4, 1),
        (4, 2),
        (8, 1),
        (8, 2),
    ]
    assert sink[-1]["stop_reason"] == "all configurations measured"
    assert [e["done"] for e in sink if e["type"] == "progress"] == [0, 1, 2, 3]


def test_each_configuration_may_time_its_share_of_the_budget_left() -> None:
    """measure()'s stopping rule may go on past min_seconds up to 0.6 of the budget left per configuration
    still planned, never below min_seconds nor above six times it."""
    from advisor.calibration.child import _Sweep

    payload = child_payload(JobPlan(C.ffn(), batch_sizes=[4, 8], threads=[1, 2], min_seconds=0.5))
    payload["budget_s"] = 40.0
    now = [0.0]  # the budget's clock, moved by the test: no reading of the machine's
    sweep = _Sweep(payload, Sink(), total=4, clock=lambda: now[0])
    assert sweep.max_seconds() == 3.0  # 0.6 x 40 / 4 = 6 s, capped at 6 x 0.5
    now[0] = 36.0  # 4 s left for 4 configurations: 0.6 s each
    assert sweep.max_seconds() == pytest.approx(0.6)
    sweep.done = 3
    now[0] = 39.9  # nothing left: the minimum still
    assert sweep.max_seconds() == 0.5


def test_a_slow_configuration_says_after_its_steps_how_long_it_still_needs() -> None:
    """measure() tells the sweep of each step (on_step: its seconds, the fewest steps still to come); from
    steps of 0.25 s on, at most every half second, the child says how long the configuration still needs:
    those steps at its median step so far, then what followed the timing in the latest configuration at
    that thread count. The clock is the test's; the measurement is scripted (measure's own word is tested in
    test_stopping_rule.py)."""
    from advisor.calibration.child import _Sweep

    payload = child_payload(JobPlan(C.ffn(), batch_sizes=[4, 8], threads=[2]))
    now = [0.0]
    sink = Sink()
    sweep = _Sweep(payload, sink, total=2, clock=lambda: now[0])
    sweep.per_batch[None] = (4, 0.001)  # an earlier configuration's 1 ms steps: this one is cut as stalled

    def scripted(steps: list[tuple[float, int]], after: float) -> Any:
        def measure(candidate: Any, **kwargs: Any) -> dict[str, Any]:
            for seconds, left in steps:
                now[0] += seconds
                kwargs["on_step"](seconds, left)
            now[0] += after  # the tracked step, then the rest
            return {"status": "error"}

        return measure

    # a stalled one's warm-up, then its timed steps; 7 s after its last (a 4.9 s tracked step, 2.1 s more)
    sweep.measure = scripted([(5.0, 4), (0.1, 3), (5.2, 2), (0.3, 1), (4.9, 1)], 7.0)  # type: ignore[assignment]
    sweep.run(4, 2)
    sweep.measure = scripted([(4.0, 3)], 0.0)  # type: ignore[assignment]
    sweep.run(8, 2)
    words = [(e["done"], e["step_left_s"]) for e in sink if "step_left_s" in e]
    # 5.0 s: 4 x 5.0; 0.1 s: too short to speak; 5.2 s: 2 x median(5.0, 0.1, 5.2); 0.3 s: within half a
    # second of the last word; 4.9 s: 1 x median(5.0, 0.1, 5.2, 0.3, 4.9). Not the stall cut, a bound on
    # the gathers (as an estimate it said 17-22 s where 0.5-1.8 s were left). The next configuration: 3 x
    # 4.0, then the 2.1 s that followed the first one's timing past its tracked step
    assert words == [
        (0, pytest.approx(20.0)),
        (0, pytest.approx(10.0)),
        (0, pytest.approx(4.9)),
        (1, pytest.approx(14.1)),
    ]
    assert all(e["threads"] == 2 for e in sink if "step_left_s" in e)
