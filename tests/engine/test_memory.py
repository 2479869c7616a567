"""The memory account, layer kind by layer kind and family by family, against PyTorch's own figure: the peak
of live tensor bytes during a real training step (advisor.calibration.memory.live_tensor_peak)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from advisor.calibration import make_step
from advisor.calibration.memory import live_tensor_peak
from advisor.engine import memory_for, recommend
from advisor.engine.layers import FLOAT_BYTES, count, layer_memory
from advisor.engine.layers import KINDS as LAYER_KINDS
from tests.calibration import candidates as C
from tests.engine.kinds import KINDS, L, one_network

TOLERANCE = 0.10  # the benchmark's target (bench/results/memory_amd-epyc-2c_repeats/README.md)


def _measured(candidate: dict[str, Any], batch: int) -> int:
    torch.manual_seed(0)
    step = make_step(candidate, "cpu")
    data = step.make_batch(batch)

    def one() -> None:
        step.refill(data)
        step.run(data)

    return live_tensor_peak(one)


def test_every_layer_kind_has_a_case() -> None:
    assert set(LAYER_KINDS) <= set(KINDS)


@pytest.mark.parametrize("batch", [4, 64])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_account_of_each_layer_kind_matches_pytorch(kind: str, batch: int) -> None:
    torch.set_num_threads(1)
    candidate = KINDS[kind]
    estimate = memory_for(candidate, batch_size=batch)["total"]
    assert estimate == pytest.approx(_measured(candidate, batch), rel=TOLERANCE)


@pytest.mark.parametrize("family", sorted(C.ALL_FAMILIES))
def test_the_account_of_each_family_matches_pytorch(family: str) -> None:
    torch.set_num_threads(1)
    candidate = C.ALL_FAMILIES[family]()
    estimate = memory_for(candidate, batch_size=48)["total"]
    assert estimate == pytest.approx(_measured(candidate, 48), rel=TOLERANCE)


def test_the_breakdown_sums_to_the_peak_and_grows_with_the_batch() -> None:
    small, large = (memory_for(KINDS["Conv2d"], batch_size=b) for b in (8, 128))
    for m in (small, large):
        assert sum(v for k, v in m.items() if k != "total") == m["total"]
    assert large["total"] > small["total"]
    assert large["weights"] == small["weights"]
    assert large["activations"] > 10 * small["activations"]


def test_cuda_rounds_every_block_up_to_512_bytes() -> None:
    tiny = one_network(
        [L("Linear", in_features=3, out_features=5), L("Linear", in_features=5, out_features=10)], [3]
    )
    cpu, cuda = memory_for(tiny, batch_size=1), memory_for(tiny, batch_size=1, device="cuda")
    assert cuda["weights"] == 4 * 512  # four parameter tensors of a few bytes each
    assert cpu["weights"] == 4 * (3 * 5 + 5 + 5 * 10 + 10)
    assert cuda["total"] % 512 == 0


def test_the_gpu_plan_halves_the_batch_by_the_new_account() -> None:
    spec = {
        "task": "sequence",
        "hardware": {"cpu_cores": 8, "ram_gb": 64, "gpu": "gtx-1080", "gpu_memory_gb": 0.3},
        "data": {"examples": 100_000, "input_shape": [64], "outputs": 5, "vocab_size": 20_000},
    }
    rec = recommend(spec)
    for c in rec["candidates"]:
        batch = c["training"]["batch_size"]
        assert c["memory_bytes"] == memory_for(c, batch_size=batch, device="cuda")
    # the LSTM (no longer first: net.time.first may put the TCN or the GRU before it)
    lstm = next(c for c in rec["candidates"] if c["family"] == "lstm")
    assert any(r["rule"] == "gpu.memory" for r in lstm["reasons"])
    assert lstm["memory_bytes"]["total"] <= 0.3e9 * 0.9


@pytest.mark.parametrize("layers", [1, 2])
def test_both_rules_of_the_gru_keep_what_autograd_saves_for_it(layers: int) -> None:
    """The tensors autograd saves for a GRU's backward (saved_tensors_hooks, each storage once, weights
    aside): 7 values per unit and step (its gates, their products and the new state), and a copy of each
    layer's input. The shape rule counts the first, the memory rule keeps both."""
    torch.manual_seed(0)
    batch, steps, width, hidden = 4, 16, 32, 64
    gru = nn.GRU(width, hidden, num_layers=layers, batch_first=True)
    weights = {p.untyped_storage()._cdata for p in gru.parameters()}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        if t.untyped_storage()._cdata not in weights:
            saved[t.untyped_storage()._cdata] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        gru(torch.rand(batch, steps, width))
    per_example = sum(saved.values()) // batch
    item = L("GRU", input_size=width, hidden_size=hidden, num_layers=layers, batch_first=True)
    inputs = steps * (width + hidden * (layers - 1))
    assert count([item], (steps, width)).activations == 7 * layers * steps * hidden
    assert per_example == FLOAT_BYTES * (count([item], (steps, width)).activations + inputs)
    assert layer_memory(item, (steps, width)).saved == per_example
