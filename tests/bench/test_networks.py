"""The six benchmark networks: their candidate dicts' counts match what the calibration builds."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from advisor.calibration import build
from bench import networks


@pytest.mark.parametrize(
    ("name", "scale"), [("FCN-5", 0.05), ("FCN-8", 0.05), ("LSTM-32", 0.05), ("LSTM-64", 0.05)]
)
def test_it_counts_parameters_and_flops_of_the_built_network(name: str, scale: float) -> None:
    cand = networks.candidate(name, scale)
    model = build(cand)["model"]
    assert sum(p.numel() for p in model.parameters()) == cand["parameters"]
    io = cand["io"]
    if io["input_dtype"] == "int64":
        x = torch.randint(0, io["vocab_size"], (1, *io["input_shape"]))
    else:
        x = torch.randn(1, *io["input_shape"])
    # FlopCounterMode does not see the oneDNN-fused CPU LSTM: count the unfused path
    with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as counter:
        model(x)
    assert counter.get_total_flops() == pytest.approx(cand["flops_per_example"], rel=0.01)


def _linear(fan_in: int, fan_out: int) -> int:
    return fan_in * fan_out + fan_out


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("FCN-5", _linear(26752, 2048) + 2 * _linear(2048, 2048) + _linear(2048, 26752)),
        ("FCN-8", _linear(26752, 2048) + 5 * _linear(2048, 2048) + _linear(2048, 26752)),
        # Embedding + 2 LSTM layers (4 gates, input and hidden weights, two biases) + per-step Linear
        ("LSTM-32", 10000 * 512 + 2 * (4 * 512 * (512 + 512) + 2 * 4 * 512) + _linear(512, 10000)),
        ("LSTM-64", 10000 * 512 + 2 * (4 * 512 * (512 + 512) + 2 * 4 * 512) + _linear(512, 10000)),
    ],
)
def test_it_uses_dlbench_sizes_at_full_scale(name: str, parameters: int) -> None:
    cand = networks.candidate(name)
    assert cand["parameters"] == parameters
    assert cand["training"]["batch_size"] == networks.BATCH[name]


def test_it_rejects_an_unknown_network() -> None:
    with pytest.raises(KeyError):
        networks.candidate("VGG-16")
