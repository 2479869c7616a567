"""`python -m bench advice`'s parts (its search's widened networks are the engine's `variation.scaled`,
tests/engine/test_variation.py): the synthetic token tasks are learnable as constructed, and token ids
reach the embedding whole."""

from __future__ import annotations

from typing import Any

import torch

from advisor.engine import recommend
from advisor.probe.learning import split as splits
from advisor.probe.learning import train
from bench.advice_data import _tokens, dataset


def _bag(spec: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in recommend(spec)["candidates"] if c["depth"] == "shallow")


def test_it_learns_the_counting_task_with_the_bag_of_embeddings() -> None:
    """Whole token ids in, not standardised values: the bag of embeddings gets within reach of the 0.95 the
    task allows by construction (5% of labels flipped), far above chance."""
    torch.set_num_threads(1)
    sample, best = _tokens(1500, 0, order=False)
    _, spec, _ = dataset("tokens-count", 0)
    split = splits.split(sample, goal="classify", seed=0, scale=False)
    assert split.x_train.max() == 199 and float(split.x_train[0, 0]).is_integer()
    run = train.train(_bag(spec), split, budget_s=60, seed=0)
    assert best == 0.95
    assert run["score"] >= 0.85
