"""measure()'s stopping rule, timed by a synthetic clock: steps of scripted durations, no real time in any
assertion. It stops once the median's 90% interval (order statistics) is within ±5% of the median, or at the
configuration's time, and then the configuration is unreliable with the reason."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest
import torch

from advisor.calibration.child import stalled_after
from advisor.calibration.contention import judge
from advisor.calibration.measure import time_steps
from advisor.engine.robust import median_interval, relative_halfwidth, trimmed_mean, winsorised_mean

CPU = torch.device("cpu")


class SyntheticTimer:
    """A clock that only moves when a step runs: each step takes the next of `durations`."""

    def __init__(self, durations: Callable[[], float]) -> None:
        self.now = 0.0
        self.durations = durations
        self.steps = 0

    def __call__(self) -> float:
        return self.now

    def step(self, _batch: object) -> None:
        self.now += self.durations()
        self.steps += 1


def _time(
    timer: SyntheticTimer, *, max_seconds: float | None, min_iterations: int = 5, min_seconds: float = 0.0
) -> dict[str, object]:
    return time_steps(
        timer.step,
        (),
        CPU,
        min_iterations=min_iterations,
        min_seconds=min_seconds,
        warmup=0,
        max_seconds=max_seconds,
        clock=timer,
    )


def _lognormal(sigma: float, seed: int) -> Callable[[], float]:
    rng = random.Random(seed)
    return lambda: 0.01 * math.exp(rng.gauss(0.0, sigma))


def test_a_steady_step_stops_at_the_minimum_count_as_precise() -> None:
    rng = random.Random(1)
    timer = SyntheticTimer(lambda: 0.01 * (1 + rng.uniform(-0.01, 0.01)))
    timed = _time(timer, max_seconds=10.0)
    assert timed["stopped"] == "precise" and len(timed["samples"]) == 5  # type: ignore[arg-type]
    assert timed["interval_halfwidth"] <= 0.01  # type: ignore[operator]


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_a_noisy_step_is_timed_until_its_median_is_pinned(seed: int) -> None:
    """Log-normal steps with a 30% spread: five steps leave the median's interval far wider than ±5%; the
    rule keeps timing (about 150 steps for this spread) and stops as soon as it is narrow enough."""
    timer = SyntheticTimer(_lognormal(0.3, seed))
    timed = _time(timer, max_seconds=100.0)
    samples: list[float] = timed["samples"]  # type: ignore[assignment]
    assert timed["stopped"] == "precise"
    assert 60 < len(samples) < 400
    assert relative_halfwidth(samples) <= 0.05
    # it checks at counts growing by a quarter and stopped at the first check where the interval was narrow
    checks = [5]
    while checks[-1] < len(samples):
        checks.append(max(checks[-1] + 1, math.ceil(checks[-1] * 1.25)))
    assert checks[-1] == len(samples)
    assert all(relative_halfwidth(samples[:c]) > 0.05 for c in checks[:-1])
    assert timer.now < 100.0


def test_a_step_too_noisy_for_its_time_stops_there_and_is_unreliable() -> None:
    timer = SyntheticTimer(_lognormal(1.5, 5))
    timed = _time(timer, max_seconds=0.5)
    samples: list[float] = timed["samples"]  # type: ignore[assignment]
    assert timed["stopped"] == "time"
    assert timer.now >= 0.5 and timer.now - samples[-1] < 0.5  # stopped at the first step past the time
    halfwidth = timed["interval_halfwidth"]
    assert isinstance(halfwidth, float) and halfwidth > 0.05
    (reason,) = judge(None, halfwidth=halfwidth, timed_seconds=sum(samples), iterations=len(samples))
    assert reason["code"] == "interval" and f"after {len(samples)} steps" in reason["text"]


def test_without_a_time_it_stops_at_the_minimums_and_reports_the_interval() -> None:
    timer = SyntheticTimer(_lognormal(0.5, 6))
    timed = _time(timer, max_seconds=None, min_iterations=7)
    assert timed["stopped"] == "minimum" and len(timed["samples"]) == 7  # type: ignore[arg-type]
    lo, hi = timed["median_interval"]  # type: ignore[misc]
    assert lo <= sorted(timed["samples"])[3] <= hi  # type: ignore[index]


@pytest.mark.parametrize(
    ("step_s", "min_iterations", "steps"),
    [
        (0.04, 2, 8),  # the duration decides: the first step to end at or past 0.3 s is the eighth
        (0.2, 2, 2),  # two steps are past 0.3 s already
        (0.001, 400, 400),  # the count decides: 0.4 s
    ],
)
def test_without_a_time_it_stops_at_the_first_step_past_both_minimums(
    step_s: float, min_iterations: int, steps: int
) -> None:
    timer = SyntheticTimer(lambda: step_s)
    timed = _time(timer, max_seconds=None, min_iterations=min_iterations, min_seconds=0.3)
    assert len(timed["samples"]) == steps  # type: ignore[arg-type]
    assert timed["stopped"] == "minimum"


def test_two_steps_have_no_interval() -> None:
    timer = SyntheticTimer(lambda: 0.01)
    timed = _time(timer, max_seconds=None, min_iterations=2)
    assert timed["median_interval"] is None and timed["interval_halfwidth"] is None
    (reason,) = judge(None, halfwidth=math.inf, timed_seconds=0.02, iterations=2)
    assert "no interval yet" in reason["text"]


@pytest.mark.parametrize(
    ("n", "ranks"),
    [
        (4, None),  # 2 * (1/2)^4 = 0.125 > 0.10: even [min, max] covers the median only 87.5% of the time
        (5, (1, 5)),  # 2 * (1/2)^5 = 0.0625
        (10, (2, 9)),  # P(B <= 1) = 11/1024; P(B <= 2) = 56/1024 > 0.05
        (100, (42, 59)),  # the normal approximation would say 41.8
    ],
)
def test_the_interval_of_the_median_comes_from_order_statistics(
    n: int, ranks: tuple[int, int] | None
) -> None:
    samples = [float(i) for i in range(1, n + 1)]
    random.Random(n).shuffle(samples)
    found = median_interval(samples)
    assert found == (None if ranks is None else (float(ranks[0]), float(ranks[1])))


def test_one_outlier_moves_the_mean_and_not_the_trimmed_mean() -> None:
    steps = [0.032] * 19 + [4.5]  # the GAN: 32 ms steps and one multi-second stall
    assert sum(steps) / 20 > 7 * 0.032
    assert trimmed_mean(steps) == pytest.approx(0.032)
    assert winsorised_mean(steps) == pytest.approx(0.032)


@pytest.mark.parametrize(
    ("step", "cut", "warmed", "timed", "stopped"),
    [
        (5.0, None, 2, 5, "time"),  # measure() alone keeps its minimums
        (5.0, 0.7, 1, 3, "time"),  # cut after 0.7 s: one warm-up, the median of three
        (0.125, 0.7, 2, 5, "precise"),  # steps within the cut keep every warm-up and the minimum count
    ],
)
def test_a_configuration_that_stalled_stops_at_three_steps(
    step: float, cut: float | None, warmed: int, timed: int, stopped: str
) -> None:
    """Steps of 5 s where the sweep expected 35 ms (2 threads beside two busy processes on 2 cores): a
    sweep's configuration cut after 0.7 s times three steps, which have no interval: unreliable."""
    timer = SyntheticTimer(lambda: step)
    timing = time_steps(
        timer.step,
        (),
        CPU,
        min_iterations=5,
        min_seconds=0.5,
        warmup=2,
        max_seconds=0.7,
        clock=timer,
        cut_after_s=cut,
    )
    assert (timing["warmed"], len(timing["samples"]), timer.steps) == (warmed, timed, warmed + timed)
    assert timing["stopped"] == stopped
    if timed < 5:
        assert timing["interval_halfwidth"] is None
        (reason,) = judge(None, halfwidth=math.inf, timed_seconds=step * timed, iterations=timed)
        assert "no interval yet after 3 steps" in reason["text"]


@pytest.mark.parametrize(
    ("seen", "batch", "after"),
    [
        (None, 64, None),  # the sweep's first configuration: nothing to expect it from
        ((128, 0.033), 128, 4.0 * 5 * 0.033),  # an LSTM's 1-thread step: 0.66 s, then 5 s steps stalled
        ((128, 0.14), 256, 4.0 * 5 * 0.28),  # twice the batch: twice the step expected (5.6 s)
        ((64, 0.0002), 128, 0.5),  # a tiny step: never within the configuration's own share
    ],
)
def test_a_configuration_counts_as_stalled_at_four_times_the_steps_the_sweep_expects(
    seen: tuple[int, float] | None, batch: int, after: float | None
) -> None:
    found = stalled_after(seen, batch, 5, 0.5)
    assert found == (None if after is None else pytest.approx(after))


@pytest.mark.parametrize(
    ("step", "cut", "heard"),
    [
        # stalled: one warm-up (the cut passed), then three timed steps; after each, the fewest still to come
        (5.0, 0.7, [(5.0, 3), (5.0, 2), (5.0, 1), (5.0, 0)]),
        # measure() alone: both warm-ups, then its five timed steps
        (5.0, None, [(5.0, 6), (5.0, 5), (5.0, 4), (5.0, 3), (5.0, 2), (5.0, 1), (5.0, 0)]),
        # steps within the cut: every warm-up and the minimum count, at least min_seconds of them
        (0.125, 0.7, [(0.125, 6), (0.125, 5), (0.125, 4), (0.125, 3), (0.125, 2), (0.125, 1), (0.125, 0)]),
        # steps too short for min_seconds: the seconds decide (0.5 s of 0.05 s steps)
        (0.05, 0.7, [(0.05, 11), (0.05, 10)]),
    ],
)
def test_each_step_says_how_many_the_timing_still_needs_at_least(
    step: float, cut: float | None, heard: list[tuple[float, int]]
) -> None:
    """A sweep's remaining time follows a slow configuration by what its steps say: each step's seconds
    and the fewest steps still to come were each as long (warm-up ones included)."""
    timer = SyntheticTimer(lambda: step)
    said: list[tuple[float, int]] = []
    time_steps(
        timer.step,
        (),
        CPU,
        min_iterations=5,
        min_seconds=0.5,
        warmup=2,
        max_seconds=0.7 if cut is not None else None,
        clock=timer,
        cut_after_s=cut,
        on_step=lambda seconds, left: said.append((seconds, left)),
    )
    assert said[: len(heard)] == [pytest.approx(h) for h in heard]
    assert said[-1][1] == 0 and len(said) == timer.steps  # the last one says it was the last
