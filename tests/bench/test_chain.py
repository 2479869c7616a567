"""bench chain's reading of a chain against the search (bench/chain.py): the step that reaches the target or
the search's best within a point, and the CPU share counted up to that step."""

from __future__ import annotations

from typing import Any

import pytest

from bench.chain import best_trial, reached, report


def _chain(*scores: float | None, cpu: float = 2.0) -> dict[str, Any]:
    steps = [
        {"step": i + 1, "score": s, "cpu_s": cpu, "candidates": [0], "variation": {}}
        for i, s in enumerate(scores)
    ]
    kept = [s for s in scores if s is not None]
    return {"steps": steps, "first_missed": True, "met": False, "best": max(kept), "cpu_s": cpu * len(steps)}


@pytest.mark.parametrize(
    ("scores", "target", "search", "step"),
    [
        ((0.967, 0.967, 0.967), 0.99, 0.967, 1),  # the search's best at the first step
        ((0.95, 0.99, 1.0), 1.0, 0.995, 2),  # within a point of the search's best before the target
        ((0.95, 0.97, 0.99), 0.99, None, 3),  # no search: the target alone
        ((0.90, None, 0.93), 0.99, 0.967, None),  # neither
    ],
)
def test_it_finds_the_step_that_reaches(
    scores: tuple[float | None, ...], target: float, search: float | None, step: int | None
) -> None:
    assert reached(_chain(*scores), target, search) == step


def test_it_counts_the_chain_cpu_up_to_the_step_that_reached() -> None:
    results = {
        "iris": {"chain": _chain(0.967, 0.967, 0.967), "search": {"score": 0.967, "splits": 3, "cpu_s": 20.0}}
    }
    row = report(results).splitlines()[-1]
    assert "| 1 | 2.0 | 20.0 | 10% |" in row  # the first step's 2 s, not the chain's 6


@pytest.mark.parametrize(
    ("trials", "best"),
    [
        ([{"val": 1.0, "val_loss": 0.2}, {"val": 1.0, "val_loss": 0.05}, {"val": 0.9, "val_loss": 0.01}], 1),
        ([{"val": 0.9, "val_loss": 0.01}, {"val": 1.0, "val_loss": None}], 1),  # the score decides first
        ([{"val": 1.0, "val_loss": None}, {"val": 1.0, "val_loss": 0.3}], 1),  # a loss beats none
        ([{"val": None}, {"error": "width"}], None),  # no trial scored
    ],
)
def test_it_breaks_a_tie_on_the_validation_score_by_the_loss(
    trials: list[dict[str, Any]], best: int | None
) -> None:
    found = best_trial(trials)
    assert (None if found is None else trials.index(found)) == best
