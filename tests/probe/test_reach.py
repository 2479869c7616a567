"""The time-to-target prediction (`advisor.probe.learning.reach`), table-driven on synthetic curves whose
answer follows from their construction."""

from __future__ import annotations

import math
from typing import Any

import pytest

from advisor.probe.learning import reach

BATCH, SAMPLE_STEPS, FULL_TRAIN = 64, 6, 1079  # digits: a 360-example sample, 1,079 training examples
FULL_STEPS = math.ceil(FULL_TRAIN / BATCH)
CHANCE = 0.1


def _law(n: float, ceiling: float, b: float, c: float) -> float:
    return ceiling - b * n ** (-c)


def _run(scores: list[float], steps: int = SAMPLE_STEPS) -> dict[str, Any]:
    rows = [{"epoch": i + 1, "test": s} for i, s in enumerate(scores)]
    return {"epochs": rows, "steps_per_epoch": steps, "batch_size": BATCH}


def _rising(best: float, tau: float, epochs: int = 120) -> list[float]:
    """A sample's held-out score: from chance towards `best` with time constant `tau` updates."""
    return [
        CHANCE + (best - CHANCE) * (1 - math.exp(-(e * SAMPLE_STEPS) / tau)) for e in range(1, epochs + 1)
    ]


def _points(b: float, c: float, sizes: tuple[int, ...] = (90, 180, 360)) -> list[dict[str, Any]]:
    return [{"examples": n, "score": _law(n, 1.0, b, c)} for n in sizes]


@pytest.mark.parametrize(
    ("target", "test_examples", "goal", "declines"),
    [
        (0.95, 30, "classify", True),  # iris: ±0.065 against 0.05 of room
        (0.95, 36, "classify", True),  # wine: ±0.060
        (0.95, 114, "classify", False),  # breast cancer: ±0.034
        (0.98, 360, "classify", False),  # digits: ±0.012 against 0.02
        (0.9, 800, "classify", False),  # the token tasks
        (0.95, 30, "regress", False),  # an R² target has no binomial band
    ],
)
def test_unresolvable_targets_are_declined(
    target: float, test_examples: int, goal: str, declines: bool
) -> None:
    why = reach.unresolvable(target, test_examples, goal)
    assert (why is not None) is declines
    assert reach.band(target, test_examples) == pytest.approx(
        1.645 * math.sqrt(target * (1 - target) / test_examples)
    )
    if declines:
        assert f"{test_examples} examples" in (why or "")


def test_a_dip_is_no_setback_in_the_running_best() -> None:
    rows = reach.running_best(_run([0.5, 0.8, 0.7, 0.9]))
    assert [s for _, s in rows] == [0.5, 0.8, 0.8, 0.9]
    assert [u for u, _ in rows] == [6, 12, 18, 24]


# error laws err(n) = b * n^-c (no floor), at 1,079 examples:
ABOVE = (3.0, 0.8)  # 0.989, above 0.98
BELOW = (2.0, 0.6)  # 0.973, below 0.98


@pytest.mark.parametrize(
    ("case", "scores", "points", "target", "test_examples", "method", "reached"),
    [
        ("reached on the sample", [0.9, 0.95, 0.981, 0.99], [], 0.98, 360, "sample", True),
        ("exactly at the target", [0.9, 0.98], [], 0.98, 360, "sample", True),
        ("size curve above", _rising(0.96, 60), _points(*ABOVE), 0.98, 360, "size_curve", True),
        ("size curve below", _rising(0.96, 60), _points(*BELOW), 0.98, 360, "size_curve", False),
        (
            "two sizes only",
            _rising(0.96, 60),
            _points(*ABOVE, sizes=(180, 360)),
            0.98,
            360,
            "declined",
            None,
        ),
        ("iris-sized test split", _rising(0.9, 60), _points(*ABOVE), 0.95, 30, "declined", None),
        ("flat at chance", [CHANCE] * 30, _points(*ABOVE), 0.98, 360, "declined", None),
    ],
)
def test_the_prediction_follows_the_curves(
    case: str,
    scores: list[float],
    points: list[dict[str, Any]],
    target: float,
    test_examples: int,
    method: str,
    reached: bool | None,
) -> None:
    run = _run(scores)
    answer = reach.predict(
        run,
        points,
        target=target,
        goal="classify",
        full_train=FULL_TRAIN,
        batch_size=BATCH,
        test_examples=test_examples,
    )
    assert answer["method"] == method, case
    assert answer["reached"] is reached, case
    assert answer["reason"], case
    if method == "sample":
        first = next(i + 1 for i, s in enumerate(scores) if s >= target)
        assert answer["updates"] == first * SAMPLE_STEPS
        assert answer["epochs"] == math.ceil(first * SAMPLE_STEPS / FULL_STEPS)
    law = ABOVE if reached else BELOW
    if method == "size_curve":
        # the points lie on err(n) = b * n^-c exactly: the fit recovers the law at full size
        assert answer["fit"]["estimate"] == pytest.approx(_law(FULL_TRAIN, 1.0, *law), abs=1e-6)
        assert answer["fit"]["low"] <= answer["fit"]["estimate"] <= answer["fit"]["high"]
        low, high = answer["fit"]["low"], answer["fit"]["high"]
        assert answer["certain"] is not (low < target <= high)
    if method == "size_curve" and reached:
        # the full run's error shrinks to its ceiling by the same factor as the sample's to its best
        ratio = (1 - target) / (1 - answer["fit"]["estimate"])
        need = 1 - ratio * (1 - max(scores))
        first = next(i + 1 for i, s in enumerate(scores) if s >= need - 1e-9)
        assert answer["updates"] == first * SAMPLE_STEPS
        assert answer["epochs"] == math.ceil(first * SAMPLE_STEPS / FULL_STEPS)


def test_it_forecasts_in_the_probe_when_the_sample_misses_the_target() -> None:
    """The probe's time-to-target line keeps "not reached on the sample" and adds the forecast from its
    learning curve, with seconds from the plan's time per epoch."""
    from advisor.probe.learning.plan import ProbePlan
    from advisor.probe.learning.reach import time_to_target

    scores = _rising(0.96, 60)
    run = {**_run(scores), "score": max(scores)}
    plan = ProbePlan(
        "x.npz",
        "classify",
        0.98,
        1349,
        None,
        None,
        seconds_per_epoch={"deep": {"seconds": 2.0, "basis": "measured"}},
    )
    answer = time_to_target(plan, "deep", run, FULL_TRAIN, points=_points(*ABOVE), test_examples=360)
    assert answer is not None and answer["reached"] is False and "epochs_at_full_size" not in answer
    forecast = answer["forecast"]
    assert forecast["method"] == "size_curve" and forecast["reached"] is True
    assert forecast["seconds_to_target"] == pytest.approx(forecast["epochs"] * 2.0)
    small = time_to_target(plan, "deep", run, FULL_TRAIN, points=_points(*ABOVE), test_examples=30)
    assert small is not None and small["forecast"]["method"] == "declined"
    # the verdict's own fit at full size is the forecast's: the page shows one number
    own = {"method": "power_law", "estimate": 0.97, "low": 0.95, "high": 0.99}
    given = time_to_target(
        plan, "deep", run, FULL_TRAIN, points=_points(*ABOVE), test_examples=360, fitted=own
    )
    assert given is not None and given["forecast"]["reached"] is False
    assert "0.970" in given["forecast"]["reason"] and given["forecast"]["certain"] is False
    failed = {"method": "bounds", "estimate": 0.96, "low": 0.96, "high": 1.0}
    bounds = time_to_target(
        plan, "deep", run, FULL_TRAIN, points=_points(*ABOVE), test_examples=360, fitted=failed
    )
    assert bounds is not None and bounds["forecast"]["method"] == "declined"
    assert "could not be fitted" in bounds["forecast"]["reason"]
