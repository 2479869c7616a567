"""The next step after a probe that missed its target (issue 25 item 4): the diagnosis from the probe's own
curves, and which candidate of the recommendation it proposes, with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import recommend
from advisor.engine.variation import vary
from advisor.probe.learning.nextstep import DATA, OVER, RISING, UNDER, diagnose, doubling_gain, next_step

TARGET = 0.95
# a - b n^-c: at 1,000 examples b n^-c is 0.05 with c = 0.5 (b = 1.58), so doubling gains 0.05 x 0.29 = 0.015
RISING_CURVE = {
    "method": "power_law",
    "params": {"a": 1.0, "b": 1.5811, "c": 0.5},
    "estimate": 0.97,
    "examples": 8000,
}
FLAT_CURVE = {
    "method": "power_law",
    "params": {"a": 0.9, "b": 0.5, "c": 1.5},
    "estimate": 0.9,
    "examples": 8000,
}
SHORT_CURVE = {"method": "bounds", "estimate": 0.9, "low": 0.9, "high": 1.0, "examples": 8000}


def run(score: float, train: float, stopped: str = "plateau", family: str = "ffn") -> dict[str, Any]:
    return {
        "family": family,
        "score": score,
        "train_score": train,
        "train_examples": 1000,
        "stopped": stopped,
    }


def entry(index: int, depth: str, parameters: int, family: str = "ffn") -> dict[str, Any]:
    return {"index": index, "candidate": {"family": family, "depth": depth, "parameters": parameters}}


def test_it_measures_the_gain_of_doubling_the_data_on_the_fitted_curve() -> None:
    gain = doubling_gain(RISING_CURVE, 1000)
    assert gain is not None and gain == pytest.approx(0.05 * (1 - 2**-0.5), rel=1e-3) and gain >= RISING
    assert (doubling_gain(FLAT_CURVE, 1000) or 0) < RISING
    assert doubling_gain(SHORT_CURVE, 1000) is None  # no fitted curve: it cannot tell


@pytest.mark.parametrize(
    ("run_", "curve", "diagnosis", "words"),
    [
        (
            run(0.90, 0.91),
            RISING_CURVE,
            UNDER,
            "scores 0.91 on its own training split, below the target 0.95",
        ),
        (run(0.90, 1.0), RISING_CURVE, DATA, "doubling the examples gains about 0.015"),
        (run(0.90, 1.0), FLAT_CURVE, OVER, "its learning curve is flat"),
        (run(0.90, 1.0), SHORT_CURVE, OVER, "too short to tell"),
        (run(0.96, 1.0), FLAT_CURVE, None, None),  # met: nothing to diagnose
    ],
)
def test_it_diagnoses_from_the_training_score_the_gap_and_the_curve(
    run_: dict[str, Any], curve: dict[str, Any], diagnosis: str | None, words: str | None
) -> None:
    found = diagnose(run_, target=TARGET, fitted=curve)
    if diagnosis is None:
        assert found is None
        return
    assert found is not None and found[0] == diagnosis and words in found[1]


SHALLOW, DEEP, BIG, SMALL = (
    entry(1, "shallow", 8_000),
    entry(0, "deep", 9_500, "cnn"),
    entry(2, "deep", 90_000, "cnn"),
    entry(3, "shallow", 500),
)


@pytest.mark.parametrize(
    ("runs", "curve", "candidates", "tried", "candidate", "change", "words"),
    [
        # under-fitting: the first untried candidate with more parameters, in the recommendation's order
        (
            {"shallow": (run(0.8, 0.85), SHALLOW)},
            FLAT_CURVE,
            [DEEP, SHALLOW, BIG],
            [1],
            0,
            None,
            "more parameters",
        ),
        (
            {"shallow": (run(0.8, 0.85), SHALLOW)},
            FLAT_CURVE,
            [DEEP, SHALLOW, BIG],
            [0, 1],
            2,
            None,
            "candidate 3",
        ),
        # ... none larger, but its run was cut at its share of a shared time limit: the same one alone
        (
            {"shallow": (run(0.8, 0.85, "time"), SHALLOW), "deep": (run(0.7, 0.72, family="cnn"), DEEP)},
            FLAT_CURVE,
            [DEEP, SHALLOW],
            [0, 1],
            1,
            "trained alone",
            "again",
        ),
        # over-fitting: the first untried candidate with fewer parameters
        (
            {"deep": (run(0.9, 1.0, family="cnn"), BIG)},
            FLAT_CURVE,
            [DEEP, SHALLOW, BIG, SMALL],
            [2],
            0,
            None,
            "fewer",
        ),
        # data: no candidate; a larger sample
        (
            {"shallow": (run(0.9, 1.0), SHALLOW)},
            RISING_CURVE,
            [DEEP, SHALLOW, BIG, SMALL],
            [1],
            None,
            None,
            "larger sample",
        ),
    ],
)
def test_it_proposes_a_candidate_of_the_recommendation_that_fits_the_diagnosis(
    runs: dict[str, Any],
    curve: dict[str, Any],
    candidates: list[dict[str, Any]],
    tried: list[int],
    candidate: int | None,
    change: str | None,
    words: str,
) -> None:
    full = {"shallow": (None, None), "deep": (None, None), **runs}
    chosen = max(runs, key=lambda r: runs[r][0]["score"])
    step = next_step(
        target=TARGET, runs=full, chosen=chosen, fitted=curve, candidates=candidates, tried=tried
    )
    assert step is not None
    assert step["candidate"] == candidate
    assert (step["change"] or "").startswith(change or "")
    assert (change is None) == (step["change"] is None)
    assert words in step["reason"]
    assert step["from_candidate"] == runs[chosen][1]["index"]


def test_it_proposes_nothing_when_the_target_was_met() -> None:
    runs = {"shallow": (run(0.97, 1.0), SHALLOW), "deep": (None, None)}
    assert (
        next_step(target=TARGET, runs=runs, chosen="shallow", fitted=FLAT_CURVE, candidates=[DEEP], tried=[1])
        is None
    )


# Real candidates (the engine's own iris recommendation: a shallow and a deep FFN), for the steps that
# change a candidate: the engine rebuilds and recounts it (advisor/engine/variation.py).
IRIS = recommend(
    {
        "task": "tabular",
        "data": {"examples": 150, "input_shape": [4], "outputs": 3},
        "hardware": {"cpu_cores": 2, "ram_gb": 8},
        "target": {"accuracy": 0.99},
    }
)["candidates"]
R_SHALLOW, R_DEEP = (
    {"index": i, "candidate": c} for d in ("shallow", "deep") for i, c in enumerate(IRIS) if c["depth"] == d
)
UNDERFIT = {"shallow": (run(0.8, 0.85), R_SHALLOW), "deep": (run(0.9, 0.93), R_DEEP)}


@pytest.mark.parametrize(
    ("runs", "own", "cap", "variation", "words"),
    [
        # under-fitting, every candidate tried: the deep FFN again, every hidden width x2 ...
        (UNDERFIT, {}, None, {"width": 2}, "with every hidden width x2"),
        # ... on top of this probe's own: x2 then x2 again is x4
        (UNDERFIT, {"width": 2}, None, {"width": 4}, "every hidden width x4 against the recommendation"),
        # ... unless the wider network passes the server's parameter cap
        (UNDERFIT, {}, 20_000, None, "cannot be widened within the server's parameter cap"),
        # over-fitting, no smaller candidate left: weight decay (Adam: 1e-3), then ten times that, then none
        ({"shallow": (run(0.9, 1.0), R_SHALLOW)}, {}, None, {"weight_decay": 0.001}, "weight decay 0.001"),
        (
            {"shallow": (run(0.9, 1.0), R_SHALLOW)},
            {"width": 2, "weight_decay": 0.001},
            None,
            {"width": 2, "weight_decay": 0.01},
            "every hidden width x2, weight decay 0.01 against",
        ),
        (
            {"shallow": (run(0.9, 1.0), R_SHALLOW)},
            {"weight_decay": 0.01},
            None,
            None,
            "weight decay was tried",
        ),
    ],
)
def test_it_proposes_the_same_candidate_changed_when_no_candidate_fits(
    runs: dict[str, Any],
    own: dict[str, float],
    cap: int | None,
    variation: dict[str, float] | None,
    words: str,
) -> None:
    full = {"shallow": (None, None), "deep": (None, None), **runs}
    chosen = max(runs, key=lambda r: runs[r][0]["score"])
    step = next_step(
        target=0.99,
        runs=full,
        chosen=chosen,
        fitted=FLAT_CURVE,
        candidates=[R_SHALLOW, R_DEEP],
        tried=[0, 1],
        variation=own,
        max_parameters=cap,
    )
    assert step is not None
    assert step.get("variation") == variation
    assert words in f"{step['change']} {step['reason']}"
    if variation is None:
        assert step["candidate"] is None and step["change"] is None
        return
    entry_ = runs[chosen][1]
    assert step["candidate"] == entry_["index"]
    expected = vary(entry_["candidate"], {"width": 2}) if "width" in variation and not own else None
    if expected is not None:  # the step's parameters are the widened network's, as the engine counts them
        assert step["parameters"] == expected["parameters"] > entry_["candidate"]["parameters"]


def test_it_keeps_its_own_variation_when_it_proposes_the_same_candidate_alone() -> None:
    runs = {"shallow": (run(0.8, 0.85), R_SHALLOW), "deep": (run(0.9, 0.93, "time"), R_DEEP)}
    step = next_step(
        target=0.99,
        runs=runs,
        chosen="deep",
        fitted=FLAT_CURVE,
        candidates=[R_SHALLOW, R_DEEP],
        tried=[0, 1],
        variation={"width": 2},
    )
    assert step is not None and step["candidate"] == R_DEEP["index"]
    assert (step["change"] or "").startswith("trained alone") and step.get("variation") == {"width": 2}


@pytest.mark.parametrize(
    ("previous", "variation"),
    [
        (0.9, None),  # widened x2 and scored what x1 did (0.9): not widened again
        (0.897, None),  # less than half a point better: the same
        (0.85, {"width": 4}),  # widened x2 and gained 5 points: x4 next
        (None, {"width": 4}),  # the previous probe's score unknown: x4 as before
    ],
)
def test_it_stops_widening_when_the_last_widening_gained_nothing(
    previous: float | None, variation: dict[str, float] | None
) -> None:
    step = next_step(
        target=0.99,
        runs={"shallow": (None, None), **{k: v for k, v in UNDERFIT.items() if k == "deep"}},
        chosen="deep",
        fitted=FLAT_CURVE,
        candidates=[R_SHALLOW, R_DEEP],
        tried=[0, 1],
        variation={"width": 2},
        previous_score=previous,
    )
    assert step is not None and step["diagnosis"] == UNDER
    assert step.get("variation") == variation
    if variation is None:
        assert step["candidate"] is None and "more width gains nothing" in step["reason"]
        assert "x2 scored 0.900 against" in step["reason"]
