"""The learning side without Django: split, fit checks, bounded training, the curve, the verdict."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from advisor.engine import recommend
from advisor.probe.learning import curve, samples, train
from advisor.probe.learning import split as splitting
from advisor.probe.learning.verdict import verdict

IRIS_SPEC: dict[str, Any] = {
    "task": "tabular",
    "data": {"examples": 150, "input_shape": [4], "outputs": 3},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"accuracy": 0.9},
}


@pytest.fixture(scope="module")
def iris() -> splitting.Split:
    return splitting.split(samples.demo("iris"), goal="classify")


@pytest.fixture(scope="module")
def iris_shallow() -> dict[str, Any]:
    candidates = recommend(IRIS_SPEC)["candidates"]
    return next(c for c in candidates if c["depth"] == "shallow")


def test_it_splits_three_ways_stratified_and_disjoint(iris: splitting.Split) -> None:
    sizes = [len(iris.x_train), len(iris.x_val), len(iris.x_test)]
    assert sum(sizes) == 150 and min(sizes) >= 20
    for y in (iris.y_train, iris.y_val, iris.y_test):
        counts = np.bincount(y, minlength=3)  # type: ignore[arg-type]
        assert counts.max() - counts.min() <= 1  # each class in the same share in every part
    rows = {tuple(r) for r in np.concatenate([iris.x_train, iris.x_val, iris.x_test]).round(5)}
    assert len(rows) >= 145  # iris has a few duplicate rows; nothing was copied between parts
    assert abs(float(iris.x_train.mean())) < 1e-5  # standardised on the training split


@pytest.mark.parametrize(
    ("demo", "goal", "shape", "outputs", "key", "words"),
    [
        ("iris", "classify", [4], 10, "data.outputs", "the sample has 3 classes"),
        ("iris", "classify", [5], 3, "data.input_shape", "shape [4] (4 values); the task declares [5]"),
        ("digits", "classify", [1, 8, 8], 10, None, None),
        ("digits", "classify", [64], 10, None, None),  # same values, another shape: reshaped, not refused
        ("iris", "translate", [4], 3, "goal", "classify, regress or compress"),
        ("iris", "regress", [4], 1, "label_column", "numeric targets"),
    ],
)
def test_it_checks_a_sample_against_the_task(
    demo: str, goal: str, shape: list[int], outputs: int, key: str | None, words: str | None
) -> None:
    errors = splitting.check_fit(samples.demo(demo), goal=goal, input_shape=shape, outputs=outputs)
    if key is None:
        assert errors == {}
    else:
        assert words in " ".join(errors[key])


@pytest.mark.slow
def test_it_trains_the_shallow_candidate_on_iris_and_scores_it_held_out(
    iris: splitting.Split, iris_shallow: dict[str, Any]
) -> None:
    # timed by clock reads (Reads, below), with room to spare: it ends on its own rule on any machine
    run = train.train(iris_shallow, iris, budget_s=1e9, full_examples=150, clock=Reads())
    chance = 1 / 3
    assert run["score"] is not None and run["score"] > chance + 0.3
    best = next(r for r in run["epochs"] if r["epoch"] == run["best_epoch"])
    assert best["test"] == run["score"]  # the reported score is the test score at the best validation epoch
    assert run["stopped"] in {"epochs", "plateau"}
    # the reads inside training steps are part of the epoch's, and scoring the epoch takes the rest
    steps = [r["train_seconds"] for r in run["epochs"]]
    assert steps == sorted(steps) and steps[-1] > 0
    assert all(r["train_seconds"] <= r["seconds"] for r in run["epochs"])


class Reads:
    """A clock that moves one second each time it is read: a budget of N seconds is N reads on any machine."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.slow
def test_it_stops_training_when_asked_and_at_its_budget(
    iris: splitting.Split, iris_shallow: dict[str, Any]
) -> None:
    calls = {"n": 0}

    def stop_after_a_few() -> bool:
        calls["n"] += 1
        return calls["n"] > 5

    asked = train.train(
        iris_shallow, iris, budget_s=60.0, full_examples=100_000, should_stop=stop_after_a_few
    )
    assert asked["stopped"] == "stopped" and len(asked["epochs"]) <= 3
    # 100,000 examples' worth of updates would take hundreds of epochs, and the plateau rule waits 20: a
    # budget of 40 reads of the clock (a few per step) ends it after a few epochs, at the first check past it.
    timed = train.train(iris_shallow, iris, budget_s=40.0, full_examples=100_000, clock=Reads())
    assert timed["stopped"] == "time" and 1 <= len(timed["epochs"]) < 20
    assert 40.0 <= timed["seconds"] <= 40.0 + 5  # not before the budget, and within a step's reads of it
    # the same run with room to spare ends on its own rule, not the clock
    roomy = train.train(iris_shallow, iris, budget_s=1e9, full_examples=100_000, clock=Reads())
    assert roomy["stopped"] in {"plateau", "epochs"} and len(roomy["epochs"]) > len(timed["epochs"])


def test_it_recovers_a_known_power_law_within_its_interval() -> None:
    truth = lambda n: 0.95 - 2.0 * n**-0.6  # noqa: E731
    points = [{"examples": n, "score": truth(n)} for n in (50, 100, 200, 400, 800)]
    fitted = curve.fit(points, full_examples=20_000, test_examples=400)
    assert fitted["method"] == "power_law"
    assert fitted["low"] <= truth(20_000) <= fitted["high"]
    assert abs(fitted["estimate"] - truth(20_000)) < 0.02


@pytest.mark.parametrize(
    ("points", "full", "method"),
    [
        ([{"examples": 90, "score": 0.9}], 1000, "bounds"),  # one point: only the range is known
        ([{"examples": 50, "score": 0.8}, {"examples": 90, "score": 0.9}], 1000, "bounds"),
        ([{"examples": 90, "score": 0.9}], 90, "measured"),  # the sample already is the full size
    ],
)
def test_it_says_how_much_the_curve_can_tell(points: list[dict[str, Any]], full: int, method: str) -> None:
    fitted = curve.fit(points, full_examples=full, test_examples=30)
    assert fitted["method"] == method
    assert fitted["low"] <= fitted["estimate"] <= fitted["high"] <= 1.0
    if method == "bounds":
        assert fitted["high"] == 1.0  # honest: nothing rules out a perfect score


def run(score: float, family: str = "ffn", train_score: float | None = None) -> dict[str, Any]:
    return {
        "family": family,
        "score": score,
        "train_score": train_score if train_score is not None else score,
    }


def test_it_warns_about_overfitting_and_an_equal_baseline() -> None:
    answer = verdict(
        metric="accuracy",
        target=0.85,
        baseline={"model": "logistic regression", "score": 0.95},
        shallow=run(0.86, train_score=1.0),
        deep=None,
        deep_note=None,
        expected={"method": "power_law", "examples": 48_000, "estimate": 0.97, "low": 0.96, "high": 0.98},
    )
    assert "expected at full size (48,000 examples) 0.970, 90% interval 0.960\u20130.980" in answer["text"]
    notes = " ".join(answer["notes"])
    assert "overfits" in notes and "logistic regression" in notes


@pytest.mark.slow
def test_it_trains_the_deep_network_only_when_the_shallow_one_misses(tmp_path: Any) -> None:
    """Breast-cancer data with a target of 1.0: the shallow FFN misses it, so the deep one is trained too."""
    from advisor.probe.learning.pipeline import shallow_first
    from advisor.probe.learning.plan import ProbePlan

    path = tmp_path / "bc.npz"
    samples.save(samples.demo("breast_cancer"), path)
    spec = {
        **IRIS_SPEC,
        "data": {"examples": 5000, "input_shape": [30], "outputs": 2},
        "target": {"accuracy": 1.0},
    }
    candidates = recommend(spec)["candidates"]
    roles = {c["depth"]: {"index": i, "candidate": c} for i, c in reversed(list(enumerate(candidates)))}
    events: list[dict[str, Any]] = []
    plan = ProbePlan(str(path), "classify", 1.0, 5000, roles.get("shallow"), roles.get("deep"), budget_s=6.0)
    answer = shallow_first(plan, events.append)
    stages = {e["stage"] for e in events if e["type"] == "stage"}
    assert {"split", "baseline", "shallow", "deep", "curve", "verdict"} <= stages
    assert answer["shallow_score"] < 1.0 and answer["deep_needed"] is True
    assert answer["deep_score"] is not None
    assert answer["chosen"] == ("deep" if answer["deep_score"] > answer["shallow_score"] else "shallow")


@pytest.mark.slow
@pytest.mark.parametrize("goal", ["regress", "compress"])
def test_it_probes_regression_and_compression_with_their_own_scores(tmp_path: Any, goal: str) -> None:
    from advisor.probe.learning.pipeline import shallow_first
    from advisor.probe.learning.plan import ProbePlan

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6)).astype(np.float32)
    y = (x @ rng.normal(size=6)).astype(np.float32) if goal == "regress" else None
    samples.save(samples.Sample(x, y, "value" if y is not None else "none"), tmp_path / "s.npz")
    data_spec = {"examples": 3000, "input_shape": [6], "outputs": 1}
    spec = {**IRIS_SPEC, "goal": goal, "data": data_spec, "target": {"accuracy": 0.5}}
    candidates = recommend(spec)["candidates"]
    roles = {c["depth"]: {"index": i, "candidate": c} for i, c in reversed(list(enumerate(candidates)))}
    plan = ProbePlan(
        str(tmp_path / "s.npz"), goal, 0.5, 3000, roles.get("shallow"), roles.get("deep"), budget_s=4
    )
    answer = shallow_first(plan, lambda event: None)
    assert answer["metric"] == {"regress": "r2", "compress": "explained_variance"}[goal]
    assert answer["baseline_score"] is not None and answer["shallow_score"] is not None
    assert ("R²" if goal == "regress" else "variance explained") in answer["text"]


@pytest.mark.slow
def test_it_reports_a_candidate_that_cannot_train_and_goes_on(tmp_path: Any) -> None:
    import copy

    from advisor.probe.learning.pipeline import shallow_first
    from advisor.probe.learning.plan import ProbePlan

    samples.save(samples.demo("iris"), tmp_path / "iris.npz")
    candidates = recommend(IRIS_SPEC)["candidates"]
    broken = copy.deepcopy(next(c for c in candidates if c["depth"] == "shallow"))
    broken["networks"]["model"][0]["args"]["in_features"] = 5  # the data has 4 features
    deep = next(c for c in candidates if c["depth"] == "deep")
    plan = ProbePlan(
        str(tmp_path / "iris.npz"),
        "classify",
        0.9,
        150,
        {"index": 0, "candidate": broken},
        {"index": 1, "candidate": deep},
        budget_s=3,
    )
    events: list[dict[str, Any]] = []
    answer = shallow_first(plan, events.append)
    skipped = [e["data"] for e in events if e["type"] == "stage" and e["stage"] == "shallow"]
    assert skipped and "training failed" in skipped[-1]["skipped"]
    assert answer["shallow_score"] is None and answer["deep_score"] is not None
    assert "no shallow network was tried (the shallow candidate training failed" in answer["text"]
