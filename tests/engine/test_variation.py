"""A candidate with a stated change (advisor/engine/variation.py, the probe's next step): widened, every
hidden width x2 or x4, it is rebuilt with consistent shapes and recounted as the engine counts a candidate
(the same parameters torch builds); weight decay changes its training only; what cannot be widened says so."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from advisor.calibration.layers import build
from advisor.contract import Candidate
from advisor.engine import recommend
from advisor.engine.memory import memory_for
from advisor.engine.variation import CannotVary, describe, scaled, vary, widen, with_weight_decay

HARDWARE = {"cpu_cores": 2, "ram_gb": 8}
SPECS: dict[str, dict[str, Any]] = {
    "tabular": {"task": "tabular", "data": {"examples": 150, "input_shape": [4], "outputs": 3}},
    "vision": {"task": "vision", "data": {"examples": 2000, "input_shape": [1, 16, 16], "outputs": 10}},
    "tokens": {
        "task": "sequence",
        "data": {"examples": 4000, "input_shape": [40], "vocab_size": 200, "outputs": 2},
    },
    "series": {
        "task": "sequence",
        "goal": "regress",
        "data": {"examples": 4000, "input_shape": [100, 2], "outputs": 1},
    },
}


def candidates(name: str) -> list[Candidate]:
    spec = {**SPECS[name], "hardware": HARDWARE, "target": {"accuracy": 0.9}}
    return list(recommend(spec)["candidates"])


def example(candidate: Candidate) -> torch.Tensor:
    io = candidate["io"]
    if io.get("vocab_size"):
        return torch.randint(0, int(io["vocab_size"]), (2, *io["input_shape"]))
    return torch.rand(2, *io["input_shape"])


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("factor", [2, 4])
def test_it_widens_every_hidden_width_and_recounts_the_network(name: str, factor: int) -> None:
    for base in candidates(name):
        wide = widen(base, factor)
        net, original = build(wide)["model"], build(base)["model"]
        x = example(base)
        assert net(x).shape == original(x).shape  # the data's inputs and the task's outputs kept
        assert wide["parameters"] == sum(p.numel() for p in net.parameters()) > base["parameters"]
        assert wide["hidden_sizes"] == [s * factor for s in base["hidden_sizes"]]
        assert wide["flops_per_example"] > base["flops_per_example"]
        batch = wide["training"]["batch_size"]
        assert wide["memory_bytes"] == memory_for(wide, batch_size=batch, device="cpu")
        assert base["networks"] != wide["networks"] and base["parameters"] != wide["parameters"]  # a copy


@pytest.mark.parametrize("name", sorted(SPECS))
def test_it_narrows_by_a_fraction_for_a_search(name: str) -> None:
    for base in candidates(name):
        narrow = scaled(base, 0.5)
        net, original = build(narrow)["model"], build(base)["model"]
        x = example(base)
        assert net(x).shape == original(x).shape
        assert narrow["parameters"] == sum(p.numel() for p in net.parameters()) < base["parameters"]
        assert narrow["hidden_sizes"] == [max(1, round(s * 0.5)) for s in base["hidden_sizes"]]


def test_it_chains_widths_as_one_factor() -> None:
    for base in candidates("tabular"):
        assert widen(widen(base, 2), 2)["parameters"] == widen(base, 4)["parameters"]
        assert vary(base, {"width": 4})["networks"] == widen(base, 4)["networks"]


def test_it_adds_weight_decay_to_the_training_only() -> None:
    base = candidates("tabular")[0]
    decayed = vary(base, {"weight_decay": 0.001})
    assert decayed["training"]["weight_decay"] == 0.001 and "weight_decay" not in base["training"]
    assert decayed["networks"] == base["networks"] and decayed["parameters"] == base["parameters"]
    both = vary(base, {"width": 2, "weight_decay": 0.01})
    assert both["training"]["weight_decay"] == 0.01 and both["parameters"] == widen(base, 2)["parameters"]
    assert describe({"width": 2, "weight_decay": 0.01}) == "every hidden width x2, weight decay 0.01"
    assert describe(None) == "" and vary(base, None) == base


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda c: widen(c, 2), "several networks"),  # a GAN: generator and discriminator
        (lambda c: widen(c, 0), "whole number"),
        (lambda c: widen(c, 1.5), "whole number"),
        (lambda c: with_weight_decay(c, -1.0), "not negative"),
        (lambda c: vary(c, {"depth": 2}), "unknown variation depth"),
    ],
)
def test_it_refuses_a_change_the_candidate_cannot_take(change: Any, words: str) -> None:
    spec = {
        "task": "generation",
        "generation": "random",
        "data": {"examples": 4000, "input_shape": [2]},
        "hardware": HARDWARE,
        "target": {"two_sample": 0.9},
    }
    gan = recommend(spec)["candidates"][0]
    with pytest.raises(CannotVary, match=words):
        change(gan)
