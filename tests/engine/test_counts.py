"""Every candidate's layer lists, built with torch.nn, give exactly `parameters` and (where torch's FLOP
counter applies) `flops_per_example` within 1%; memory_for agrees with memory_bytes. The same for one
network per layer kind (tests/engine/kinds.py), so a kind no family proposes yet is counted as torch does."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from advisor.engine import memory_for, recommend
from advisor.engine.families import KEYS
from advisor.engine.families.roles import network_inputs
from advisor.engine.layers import KINDS as LAYER_KINDS
from advisor.engine.layers import count
from tests.engine.builder import build
from tests.engine.kinds import KINDS
from tests.engine.specs import grid

MAX_COUNTED_STEPS = 64  # unrolled recurrent layers under the FLOP counter are slow; longer ones: params only
pytestmark = pytest.mark.filterwarnings("ignore:TF32 acceleration:UserWarning")


def _unique_candidates() -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for spec in grid():
        for candidate in recommend(spec)["candidates"]:
            key = json.dumps([candidate["networks"], candidate["io"]], sort_keys=True)
            seen.setdefault(key, candidate)
    return list(seen.values())


CANDIDATES = _unique_candidates()


def _example(candidate: dict[str, Any], key: str, shape: tuple[int, ...]) -> torch.Tensor:
    io = candidate["io"]
    if io["input_dtype"] == "int64" and key == "model":
        return torch.zeros((2, *shape), dtype=torch.long)
    return torch.zeros((2, *shape))


def _torch_counts(candidate: dict[str, Any]) -> tuple[int, float | None]:
    """(parameters, forward FLOPs per example or None where the counter is not used) on the meta device."""
    parameters, flops = 0, 0.0
    counted = True
    for key, layers in candidate["networks"].items():
        shape = network_inputs(candidate)[key]
        with torch.device("meta"):
            model = build(layers)
            parameters += sum(p.numel() for p in model.parameters())
            recurrent = any(item["kind"] in ("LSTM", "RNN", "GRU") for item in layers)
            if recurrent and shape[0] > MAX_COUNTED_STEPS:
                counted = False
                continue
            # oneDNN's fused LSTM hides its matrix products from the counter: count the reference path
            with (
                torch.backends.mkldnn.flags(enabled=False),
                FlopCounterMode(display=False) as counter,
                torch.no_grad(),
            ):
                out = model(_example(candidate, key, shape))
            flops += counter.get_total_flops() / 2  # the counter counts a batch of 2
            _check_output(candidate, key, out)
    return parameters, flops if counted else None


def _check_output(candidate: dict[str, Any], key: str, out: torch.Tensor) -> None:
    io = candidate["io"]
    if key == "rbm":
        assert tuple(out.shape) == (2, candidate["networks"]["classifier"][0]["args"]["in_features"])
    elif key == "discriminator":
        assert tuple(out.shape) == (2, 1)
    elif key == "encoder":
        assert tuple(out.shape) == (2, 2 * io["latent_size"])
    elif key in ("generator", "decoder"):
        assert math.prod(out.shape[1:]) == math.prod(io["input_shape"])
    elif io["target"] in ("class", "value"):
        assert tuple(out.shape) == (2, io["outputs"])
    elif io["target"] == "class_per_step":
        assert tuple(out.shape) == (2, io["input_shape"][0], io["outputs"])
    elif io["target"] == "input":
        assert tuple(out.shape[1:]) == tuple(io["input_shape"])


@pytest.mark.parametrize(
    "candidate", CANDIDATES, ids=lambda c: f"{c['family']}-{c['published']}-{c['parameters']}"
)
def test_it_counts_parameters_and_flops_as_torch_does(candidate: dict[str, Any]) -> None:
    parameters, flops = _torch_counts(candidate)
    assert parameters == candidate["parameters"]
    if flops is not None:
        assert flops == pytest.approx(candidate["flops_per_example"], rel=0.01)


@pytest.mark.parametrize("kind", sorted(LAYER_KINDS))
def test_it_counts_every_layer_kind_as_torch_does(kind: str) -> None:
    candidate = KINDS[kind]  # test_memory.py checks that every kind has one
    counted = count(candidate["networks"]["model"], candidate["io"]["input_shape"])
    assert _torch_counts(candidate) == (counted.parameters, pytest.approx(counted.flops, rel=0.01))


def test_it_covers_every_family_and_published_network() -> None:
    families = {c["family"] for c in CANDIDATES}
    assert families == set(KEYS)  # every family of the registry: the grid (specs.py) must reach a new one
    assert {c["published"] for c in CANDIDATES} == {None, "alexnet", "googlenet", "resnet-50"}


@pytest.mark.parametrize(
    ("name", "parameters"),
    # the published counts at 1000 classes (torchvision: alexnet, googlenet without aux heads, resnet50)
    [("alexnet", 61_100_840), ("googlenet", 6_624_904), ("resnet-50", 25_557_032)],
)
def test_it_proposes_the_real_published_networks(name: str, parameters: int) -> None:
    found = [c for c in CANDIDATES if c["published"] == name and c["io"]["outputs"] == 1000]
    assert found
    assert found[0]["parameters"] == parameters


@pytest.mark.parametrize("candidate", CANDIDATES[::7], ids=lambda c: f"{c['family']}-{c['parameters']}")
def test_it_rebuilds_memory_at_the_chosen_batch_and_grows_it_with_the_batch(
    candidate: dict[str, Any],
) -> None:
    batch = candidate["training"]["batch_size"]
    # the peak on the plan's device: a GPU's caching allocator rounds every block up
    devices = {d: memory_for(candidate, batch_size=batch, device=d) for d in ("cpu", "cuda")}
    assert candidate["memory_bytes"] in devices.values()
    device = "cpu" if candidate["memory_bytes"] == devices["cpu"] else "cuda"
    bigger = memory_for(candidate, batch_size=2 * batch, device=device)
    assert bigger["total"] > candidate["memory_bytes"]["total"]
    assert bigger["weights"] == candidate["memory_bytes"]["weights"]
    parts = candidate["memory_bytes"]
    assert parts["total"] == sum(v for k, v in parts.items() if k != "total")
    assert parts["gradients"] <= parts["weights"] <= parts["total"]
