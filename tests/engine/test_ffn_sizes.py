"""size.ffn.hidden over a grid of small specs: every FFN hidden layer >= max(inputs, outputs); a deep
FFN's never below DEEP_MIN_WIDTH, the shallow one never below SHALLOW_MIN_WIDTH, both near the inputs
(W §III-B). And the deep FFN for iris, started from init.small's ±0.1 with the engine's own optimiser
settings, learns (the [4, 3, 3] it had stayed at chance)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from sklearn.datasets import load_iris
from torch import nn

from advisor.engine import recommend
from advisor.engine.families.dense import DEEP_MIN_WIDTH, SHALLOW_MIN_WIDTH
from tests.engine.builder import build
from tests.engine.specs import spec


def _small_specs() -> list[dict[str, Any]]:
    specs = []
    for features, outputs, examples, accuracy in itertools.product(
        [1, 2, 4, 13, 64, 300], [1, 3, 10, 100], [150, 5_000, 500_000], [None, 0.99]
    ):
        goal = "regress" if outputs == 1 else "classify"
        specs.append(
            spec(
                "tabular",
                [features],
                goal=goal,
                outputs=outputs,
                examples=examples,
                target={"accuracy": accuracy},
            )
        )
    specs.append(spec("vision", [1, 8, 8], outputs=10, examples=1_797))  # the flattened-image baseline
    return specs


SMALL = _small_specs()
IRIS = spec("tabular", [4], outputs=3, examples=150, target={"accuracy": 0.9})


def _ffns(task_spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in recommend(task_spec)["candidates"] if c["family"] == "ffn"]


def _label(task_spec: dict[str, Any]) -> str:
    data, accuracy = task_spec["data"], task_spec.get("target", {}).get("accuracy")
    return f"{data['input_shape']}-{data['outputs']}-{data['examples']}-{accuracy}"


@pytest.mark.parametrize("task_spec", SMALL, ids=_label)
def test_it_keeps_every_ffn_hidden_layer_at_least_as_wide_as_inputs_and_outputs(
    task_spec: dict[str, Any],
) -> None:
    inputs = math.prod(task_spec["data"]["input_shape"])
    outputs = task_spec["data"]["outputs"]
    ffns = _ffns(task_spec)
    assert ffns
    for candidate in ffns:
        sizes = candidate["hidden_sizes"]
        linears = [x["args"] for x in candidate["networks"]["model"] if x["kind"] == "Linear"]
        assert [x["out_features"] for x in linears[:-1]] == sizes  # hidden_sizes says what is built
        assert linears[-1]["out_features"] == outputs
        assert min(sizes) >= max(inputs, outputs)
        if candidate["depth"] == "deep":
            assert len(sizes) == 3 and min(sizes) >= DEEP_MIN_WIDTH
            assert sizes == sorted(sizes, reverse=True)  # tapers, never widens again
            assert sizes[0] <= 2 * max(inputs, outputs, DEEP_MIN_WIDTH) + 8
        else:
            assert len(sizes) == 1 and sizes[0] >= SHALLOW_MIN_WIDTH
            assert sizes[0] <= 2 * max(inputs, outputs, SHALLOW_MIN_WIDTH) + 8  # W: not far more


def _train_accuracy(candidate: dict[str, Any], x: torch.Tensor, y: torch.Tensor, seed: int) -> float:
    """The candidate trained as the engine says: init ±init_scale (biases zero), Adam, batch, epochs."""
    torch.manual_seed(seed)
    training = candidate["training"]
    net = build(candidate["networks"]["model"])
    with torch.no_grad():
        for p in net.parameters():
            if p.dim() >= 2:
                p.uniform_(-training["init_scale"], training["init_scale"])
            else:
                p.zero_()
    optimiser = torch.optim.Adam(net.parameters(), lr=training["learning_rate"])
    batch = training["batch_size"]
    for _ in range(training["epochs"]):
        order = torch.randperm(len(x))
        for start in range(0, len(x), batch):
            ix = order[start : start + batch]
            optimiser.zero_grad()
            nn.functional.cross_entropy(net(x[ix]), y[ix]).backward()  # [b, 3] logits vs [b]
            optimiser.step()
    with torch.no_grad():
        return float((net(x).argmax(dim=1) == y).float().mean())


@pytest.fixture
def one_thread() -> Iterator[None]:
    """A tiny network's steps are dominated by thread hand-offs: one thread is ~20x faster here."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.usefixtures("one_thread")
def test_it_sizes_the_deep_ffn_for_iris_so_that_it_learns(seed: int) -> None:
    features, labels = load_iris(return_X_y=True)
    features = (features - features.mean(axis=0)) / features.std(axis=0)
    x = torch.tensor(features, dtype=torch.float32)  # [150, 4]
    y = torch.tensor(labels)  # [150]
    deep = next(c for c in _ffns(IRIS) if c["depth"] == "deep")
    assert deep["training"]["optimizer"] == "adam"
    assert _train_accuracy(deep, x, y, seed) >= IRIS["target"]["accuracy"]
