"""The probe's verdict never contradicts its own numbers: misses just below the target, hits exactly at it,
ties between the shallow and the deep network, and the time to the target only where the target was met."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.probe.learning.plan import ProbePlan
from advisor.probe.learning.reach import time_to_target
from advisor.probe.learning.verdict import score_text, target_text, verdict


def run(score: float, family: str = "ffn") -> dict[str, Any]:
    return {"family": family, "score": score, "train_score": score}


def accuracy_verdict(
    shallow: dict[str, Any] | None, deep: dict[str, Any] | None, target: float | None
) -> dict[str, Any]:
    return verdict(
        metric="accuracy",
        target=target,
        baseline=None,
        shallow=shallow,
        deep=deep,
        deep_note=None,
        expected=None,
    )


@pytest.mark.parametrize(
    ("shallow", "deep", "target", "text", "deep_needed", "chosen"),
    [
        (run(0.93), None, 0.9, "shallow FFN reaches 0.93 (target 0.90) — deep not needed", False, "shallow"),
        (
            run(0.81),
            run(0.95, "cnn"),
            0.9,
            "shallow scores 0.81, below the target; CNN reaches 0.95 on the sample",
            True,
            "deep",
        ),
        (run(0.81), run(0.85, "cnn"), 0.9, "neither reaches the target 0.90", True, "deep"),
        (run(0.81), None, 0.9, "below the target 0.90; no deep", True, "shallow"),
        (run(0.81), None, None, "no accuracy target", None, "shallow"),
        (None, run(0.97, "cnn"), 0.9, "no shallow network was tried", None, "deep"),
    ],
)
def test_it_words_the_verdict_as_the_numbers_say(
    shallow: dict[str, Any] | None,
    deep: dict[str, Any] | None,
    target: float | None,
    text: str,
    deep_needed: bool | None,
    chosen: str,
) -> None:
    answer = accuracy_verdict(shallow, deep, target)
    assert text in answer["text"]
    assert answer["deep_needed"] is deep_needed
    assert answer["chosen"] == chosen
    assert {r["rule"] for r in answer["reasons"]} == {"net.shallow.first", "net.shallow.validate"}


@pytest.mark.parametrize(
    ("value", "target", "text"),
    [
        (0.967, 0.97, "0.967"),  # a miss that two decimals would round up to the target
        (0.9699, 0.97, "0.9699"),
        (0.96999, 0.97, "0.9699"),  # four decimals would round it up too: cut, never rounded
        (0.97, 0.97, "0.97"),  # exactly at the target
        (0.9751, 0.97, "0.98"),  # a hit may round up
        (0.964, 0.97, "0.96"),  # a clear miss keeps two decimals
        (0.967, None, "0.97"),  # no target, nothing to contradict
    ],
)
def test_it_never_rounds_a_miss_up_to_the_target(value: float, target: float | None, text: str) -> None:
    assert score_text(value, target) == text
    if target is not None and value < target:
        assert float(score_text(value, target)) < target


@pytest.mark.parametrize(("target", "text"), [(0.9, "0.90"), (0.975, "0.975"), (0.98, "0.98")])
def test_it_states_the_target_as_given(target: float, text: str) -> None:
    assert target_text(target) == text


@pytest.mark.parametrize(
    ("shallow", "deep", "target", "says", "never", "chosen", "met"),
    [
        # the case: 0.967 against 0.97 printed as 0.97 and in green
        (run(0.9666), run(0.9688, "cnn"), 0.97, "neither reaches the target 0.97", "0.97,", "deep", False),
        (
            run(0.967),
            None,
            0.97,
            "shallow FFN scores 0.967, below the target 0.97",
            "reaches",
            "shallow",
            False,
        ),
        (
            run(0.97),
            None,
            0.97,
            "shallow FFN reaches 0.97 (target 0.97) — deep not needed",
            "below",
            "shallow",
            True,
        ),
        (
            run(0.95),
            run(0.98, "cnn"),
            0.98,
            "CNN reaches 0.98 on the sample (target 0.98)",
            "neither",
            "deep",
            True,
        ),
        (None, run(0.979, "cnn"), 0.98, "CNN scores 0.979, below the target 0.98,", "(target", "deep", False),
        (None, run(0.98, "cnn"), 0.98, "CNN scores 0.98 (target 0.98)", "below", "deep", True),
        # ties: the shallow network is kept (the cheaper one), whether both miss or the shallow one hits
        (
            run(0.95),
            run(0.95, "cnn"),
            0.97,
            "neither reaches the target 0.97",
            "reaches 0.95",
            "shallow",
            False,
        ),
        (run(0.97), run(0.97, "cnn"), 0.97, "deep not needed", "below", "shallow", True),
        (run(0.9), None, None, "no accuracy target", "below", "shallow", None),
    ],
)
def test_it_words_misses_hits_and_ties_as_the_numbers_are(
    shallow: dict[str, Any] | None,
    deep: dict[str, Any] | None,
    target: float | None,
    says: str,
    never: str,
    chosen: str,
    met: bool | None,
) -> None:
    answer = accuracy_verdict(shallow, deep, target)
    assert says in answer["text"]
    assert never not in answer["text"]
    assert answer["chosen"] == chosen
    assert answer["met"] is met


def test_it_calls_an_equal_baseline_as_good_as_the_networks_without_rounding() -> None:
    answer = verdict(
        metric="accuracy",
        target=0.97,
        baseline={"model": "logistic regression", "score": 0.9666},
        shallow=run(0.9666),
        deep=None,
        deep_note="deep not trained",
        expected=None,
    )
    assert "scores 0.967, as well as any network tried" in " ".join(answer["notes"])


def _plan(target: float) -> ProbePlan:
    return ProbePlan(
        sample_path="unused",
        goal="classify",
        target=target,
        full_examples=1797,
        shallow=None,
        deep=None,
        seconds_per_epoch={"deep": {"seconds": 2.0, "basis": "measured"}},
    )


def _epochs(*tests: float) -> dict[str, Any]:
    rows = [{"epoch": i + 1, "test": t} for i, t in enumerate(tests)]
    return {"epochs": rows, "steps_per_epoch": 17, "batch_size": 64}


@pytest.mark.parametrize(
    ("run_", "reached", "epochs_at_full"),
    [
        # one epoch touched the target but the reported score (best validation epoch) misses it: not reached
        ({**_epochs(0.95, 0.972, 0.966), "score": 0.966}, False, None),
        # reached exactly at the target in epoch 2: 34 updates, at 1,438 training examples 23 a pass -> 2
        ({**_epochs(0.95, 0.97, 0.971), "score": 0.971}, True, 2),
    ],
)
def test_it_times_the_target_only_when_the_verdict_says_it_was_met(
    run_: dict[str, Any], reached: bool, epochs_at_full: int | None
) -> None:
    full_train = round(1797 * 0.8)  # the full size the learning curve extrapolates to
    answer = time_to_target(_plan(0.97), "deep", run_, full_train)
    assert answer is not None
    assert answer["reached"] is reached
    assert answer["full_size_examples"] == 1438
    assert answer.get("epochs_at_full_size") == epochs_at_full
    if reached:
        assert answer["seconds_to_target"] == pytest.approx(epochs_at_full * 2.0)
