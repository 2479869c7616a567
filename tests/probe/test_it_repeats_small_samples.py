"""A probe result a user can trust (issue 25 item 3): on a small sample the probe scores the baseline and each
network on several splits (each stratified, standardised on its own training part) and reports the median and
the range; its baseline is the better, by cross-validation on the training split, of a tuned linear model
and a tuned RBF SVM."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from advisor.engine import recommend
from advisor.probe.learning import baseline, samples
from advisor.probe.learning import split as splitting
from advisor.probe.learning.plan import ProbePlan
from advisor.probe.learning.verdict import verdict

IRIS_SPEC: dict[str, Any] = {
    "task": "tabular",
    "data": {"examples": 150, "input_shape": [4], "outputs": 3},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"accuracy": 0.9},
}


@pytest.mark.parametrize(
    ("test_examples", "repeats"),
    [(30, 3), (359, 3), (splitting.REPEAT_BELOW - 1, 3), (splitting.REPEAT_BELOW, 1), (10_000, 1)],
)
def test_it_repeats_the_split_only_where_one_split_decides_by_a_few_examples(
    test_examples: int, repeats: int
) -> None:
    assert splitting.repeats_for(test_examples) == repeats


@pytest.mark.parametrize(
    ("scores", "median", "low", "high", "splits"),
    [
        ([0.9, 0.8, 1.0], 0.9, 0.8, 1.0, 3),
        ([0.9, None, 0.7], 0.8, 0.7, 0.9, 2),  # a split the time limit cut is left out, not counted as 0
        ([0.9, None, None], None, None, None, None),  # one split has no spread
    ],
)
def test_it_reports_the_median_and_range_of_the_splits_it_measured(
    scores: list[float | None],
    median: float | None,
    low: float | None,
    high: float | None,
    splits: int | None,
) -> None:
    answer = splitting.spread(scores, [0, 1, 2])
    if median is None:
        assert answer is None
        return
    assert answer is not None
    assert (answer["median"], answer["low"], answer["high"], answer["splits"]) == pytest.approx(
        (median, low, high, splits)
    )
    assert len(answer["seeds"]) == splits


def test_it_tunes_both_classical_models_on_the_training_split_and_keeps_the_better_by_cross_validation() -> (
    None
):
    split = splitting.split(samples.demo("digits"), goal="classify", seed=1)
    base = baseline.baseline(split, seed=1)
    tried = {m["model"]: m for m in base["models"]}
    assert set(tried) == {"logistic regression", "RBF SVM"}
    assert tried["logistic regression"]["params"]["C"] in baseline.LINEAR_C
    assert tried["RBF SVM"]["params"]["C"] in baseline.SVM_C
    best = max(base["models"], key=lambda m: m["cv_score"])  # chosen by cross-validation, not by the test
    assert base["model"].startswith(best["model"]) and base["score"] == best["score"]
    assert base["score"] > 0.9 and "cross-validation on the training split" in base["chosen_by"]


@pytest.mark.parametrize(
    ("targets", "models", "note"),
    [
        (1, {"ridge regression", "RBF support-vector regression"}, None),
        (2, {"ridge regression"}, "one target"),
    ],
)
def test_it_tunes_a_regression_baseline_and_says_what_it_left_out(
    targets: int, models: set[str], note: str | None
) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 5)).astype(np.float32)
    y = np.stack([np.sin(x[:, 0]) + x[:, 1] * (k + 1) for k in range(targets)], axis=1).astype(np.float32)
    split = splitting.split(samples.Sample(x, y, "value"), goal="regress")
    base = baseline.baseline(split)
    assert {m["model"] for m in base["models"]} == models
    assert base["metric"] == "r2" and base["score"] > 0.5
    assert (note is None) == (not base["notes"]) and (note is None or note in base["notes"][0])


def _run(score: float, spread: list[float] | None, family: str = "ffn") -> dict[str, Any]:
    run: dict[str, Any] = {"family": family, "score": score, "train_score": 1.0}
    if spread:
        run["spread"] = splitting.spread(list(spread), list(range(len(spread))))
    return run


@pytest.mark.parametrize(
    ("shallow", "met", "words"),
    [
        # the first split alone would meet 0.95; the median of three does not
        (
            _run(0.967, [0.967, 0.933, 0.9]),
            False,
            "0.93 (median of 3 splits, 0.900\u20130.967), below the target",
        ),
        (
            _run(0.9, [0.9, 0.967, 0.967]),
            True,
            "reaches 0.97 (median of 3 splits, 0.900\u20130.967) (target 0.95)",
        ),
        (_run(0.967, None), True, "reaches 0.97 (target 0.95)"),
    ],
)
def test_it_words_the_verdict_by_the_median_and_shows_the_range(
    shallow: dict[str, Any], met: bool, words: str
) -> None:
    answer = verdict(
        metric="accuracy",
        target=0.95,
        baseline=None,
        shallow=shallow,
        deep=None,
        deep_note="deep not trained",
        expected=None,
    )
    assert words in answer["text"]
    assert answer["met"] is met
    assert answer["shallow_score"] == (shallow["spread"]["median"] if "spread" in shallow else 0.967)


@pytest.mark.slow
def test_it_scores_iris_on_three_paired_splits_and_keeps_the_first_for_the_code(tmp_path: Any) -> None:
    from advisor.probe.learning.pipeline import shallow_first

    samples.save(samples.demo("iris"), tmp_path / "iris.npz")
    candidates = recommend(IRIS_SPEC)["candidates"]
    roles = {c["depth"]: {"index": i, "candidate": c} for i, c in reversed(list(enumerate(candidates)))}
    events: list[dict[str, Any]] = []
    plan = ProbePlan(
        str(tmp_path / "iris.npz"), "classify", 0.9, 150, roles["shallow"], roles["deep"], budget_s=10
    )
    answer = shallow_first(plan, events.append)
    stages: dict[str, Any] = {}
    for event in events:
        if event["type"] == "stage":
            stages[event["stage"]] = event["data"]
    first = splitting.split(samples.demo("iris"), goal="classify", seed=0)
    assert stages["split"]["seeds"] == [0, 1, 2] and stages["split"]["seed"] == 0
    assert stages["split"]["indices"] == first.indices  # a code download reproduces the first split
    shallow = stages["shallow"]
    assert shallow["spread"]["splits"] == 3 and shallow["spread"]["seeds"] == [0, 1, 2]
    assert shallow["spread"]["scores"][0] == shallow["score"]
    assert stages["baseline"]["spread"]["seeds"] == shallow["spread"]["seeds"]  # paired: the same splits
    assert answer["shallow_score"] == shallow["spread"]["median"]
    assert answer["spread"]["baseline"]["median"] == answer["baseline_score"]
    assert "median of 3 splits" in answer["text"]
