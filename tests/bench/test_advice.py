"""`python -m bench advice`'s parts: the search's widened networks build and keep their inputs and outputs,
the synthetic token tasks are learnable as constructed, and token ids reach the embedding whole."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from advisor.calibration.layers import build
from advisor.engine import recommend
from advisor.probe.learning import split as splits
from advisor.probe.learning import train
from bench.advice_data import _tokens, dataset, widen


@pytest.mark.parametrize("name", ["digits", "iris", "tokens-count"])
@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_it_widens_the_hidden_layers_only(name: str, factor: float) -> None:
    _, spec, _ = dataset(name, 0)
    first = recommend(spec)["candidates"][0]
    wide = widen(first, factor)
    net, base = build(wide)["model"], build(first)["model"]
    x = (
        torch.randint(0, 200, (3, *first["io"]["input_shape"]))
        if first["io"].get("vocab_size")
        else torch.rand(3, *first["io"]["input_shape"])
    )
    assert net(x).shape == base(x).shape  # same inputs, same outputs
    count = sum(p.numel() for p in net.parameters())
    assert (count < first["parameters"]) if factor < 1 else (count > first["parameters"])


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
