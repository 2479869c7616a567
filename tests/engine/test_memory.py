"""The memory account, layer kind by layer kind and family by family, against PyTorch's own figure: the peak
of live tensor bytes during a real training step (advisor.calibration.memory.live_tensor_peak)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from advisor.calibration import make_step
from advisor.calibration.memory import live_tensor_peak
from advisor.engine import memory_for, recommend
from advisor.engine.account import RULES
from advisor.engine.memory import COMPOSITES
from tests.calibration import candidates as C

TOLERANCE = 0.10  # the benchmark's target (bench/results/memory_amd-epyc-2c_repeats/README.md)


def L(kind: str, **args: Any) -> dict[str, Any]:
    return {"kind": kind, "args": args}


def _candidate(
    layers: list[dict[str, Any]],
    shape: list[int],
    *,
    target: str = "class",
    vocab: int | None = None,
    optimizer: str = "sgd",
) -> dict[str, Any]:
    return {
        "family": "ffn",
        "networks": {"model": layers},
        "io": {
            "input_shape": shape,
            "input_dtype": "int64" if vocab else "float32",
            "vocab_size": vocab,
            "target": target,
            "outputs": 10,
            "latent_size": None,
        },
        "training": {
            "batch_size": 32,
            "optimizer": optimizer,
            "learning_rate": 0.01,
            "momentum": 0.9,
            "loss": "cross_entropy" if target == "class" else "mse",
        },
    }


def _head(features: int) -> list[dict[str, Any]]:
    return [L("Flatten"), L("Linear", in_features=features, out_features=10)]


def _conv(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [L("Conv2d", in_channels=3, out_channels=8, kernel_size=3, padding=1), *middle]


def _wide(*middle: dict[str, Any]) -> dict[str, Any]:
    """64 features through 1024 wide `middle` layers to 10 outputs."""
    return _candidate(
        [
            L("Linear", in_features=64, out_features=1024),
            *middle,
            L("Linear", in_features=1024, out_features=10),
        ],
        [64],
    )


def _recurrent(kind: str, **extra: Any) -> dict[str, Any]:
    """A `kind` recurrent layer over 32 steps of 32 features, its last step to 10 outputs."""
    return _candidate(
        [
            L(kind, input_size=32, hidden_size=128, batch_first=True, **extra),
            L("LastStep"),
            L("Linear", in_features=128, out_features=10),
        ],
        [32, 32],
    )


# one small network per layer kind; the kind under test carries most of the memory
KINDS: dict[str, dict[str, Any]] = {
    "Linear": _candidate(
        [L("Linear", in_features=256, out_features=512), L("Linear", in_features=512, out_features=10)], [256]
    ),
    "ReLU": _wide(L("ReLU")),
    "LeakyReLU": _wide(L("LeakyReLU", negative_slope=0.2)),
    "Sigmoid": _wide(L("Sigmoid")),
    "Tanh": _wide(L("Tanh")),
    "Dropout": _wide(L("ReLU"), L("Dropout", p=0.5)),
    "Flatten": _candidate([*_conv(), *_head(8 * 16 * 16)], [3, 16, 16]),
    "Reshape": _candidate(
        [
            L("Linear", in_features=64, out_features=512),
            L("Reshape", shape=[8, 8, 8]),
            L("Conv2d", in_channels=8, out_channels=8, kernel_size=3, padding=1),
            *_head(512),
        ],
        [64],
    ),
    "Conv2d": _candidate(
        [
            *_conv(L("ReLU"), L("Conv2d", in_channels=8, out_channels=16, kernel_size=3, padding=1)),
            *_head(16 * 16 * 16),
        ],
        [3, 16, 16],
    ),
    "ConvTranspose2d": _candidate(
        [
            *_conv(L("ConvTranspose2d", in_channels=8, out_channels=8, kernel_size=4, stride=2, padding=1)),
            *_head(8 * 32 * 32),
        ],
        [3, 16, 16],
    ),
    "MaxPool2d": _candidate(
        [*_conv(L("ReLU"), L("MaxPool2d", kernel_size=2)), *_head(8 * 8 * 8)], [3, 16, 16]
    ),
    "AvgPool2d": _candidate(
        [*_conv(L("ReLU"), L("AvgPool2d", kernel_size=2)), *_head(8 * 8 * 8)], [3, 16, 16]
    ),
    "AdaptiveAvgPool2d": _candidate(
        [*_conv(L("ReLU"), L("AdaptiveAvgPool2d", output_size=4)), *_head(8 * 4 * 4)], [3, 16, 16]
    ),
    "BatchNorm2d": _candidate(
        [*_conv(L("BatchNorm2d", num_features=8), L("ReLU")), *_head(8 * 16 * 16)], [3, 16, 16]
    ),
    "BatchNorm1d": _wide(L("BatchNorm1d", num_features=1024), L("ReLU")),
    "Embedding": _candidate(
        [
            L("Embedding", num_embeddings=2000, embedding_dim=64),
            L("Flatten"),
            L("Linear", in_features=16 * 64, out_features=10),
        ],
        [16],
        vocab=2000,
    ),
    "LSTM": _recurrent("LSTM"),
    "GRU": _recurrent("GRU", num_layers=2),
    "RNN": _recurrent("RNN"),
    "LastStep": _candidate(
        [
            L("Embedding", num_embeddings=500, embedding_dim=32),
            L("RNN", input_size=32, hidden_size=64, batch_first=True, num_layers=2),
            L("LastStep"),
            L("Linear", in_features=64, out_features=10),
        ],
        [24],
        vocab=500,
    ),
    "EmbeddingBag": _candidate(
        [
            L("EmbeddingBag", num_embeddings=500, embedding_dim=64, mode="mean"),
            L("Linear", in_features=64, out_features=10),
        ],
        [40],
        vocab=500,
    ),
    "RBM": C.rbm(),
    "Residual": _candidate(
        [
            *_conv(
                L(
                    "Residual",
                    body=[L("Conv2d", in_channels=8, out_channels=8, kernel_size=3, padding=1), L("ReLU")],
                    shortcut=[],
                )
            ),
            *_head(8 * 16 * 16),
        ],
        [3, 16, 16],
    ),
    "Concat": _candidate(
        [
            *_conv(
                L(
                    "Concat",
                    branches=[
                        [L("Conv2d", in_channels=8, out_channels=4, kernel_size=1)],
                        [L("Conv2d", in_channels=8, out_channels=4, kernel_size=3, padding=1), L("ReLU")],
                    ],
                )
            ),
            *_head(8 * 16 * 16),
        ],
        [3, 16, 16],
    ),
    "Adam": _candidate(
        [
            L("Linear", in_features=256, out_features=512),
            L("ReLU"),
            L("Linear", in_features=512, out_features=10),
        ],
        [256],
        optimizer="adam",
    ),
}


def _measured(candidate: dict[str, Any], batch: int) -> int:
    torch.manual_seed(0)
    step = make_step(candidate, "cpu")
    data = step.make_batch(batch)

    def one() -> None:
        step.refill(data)
        step.run(data)

    return live_tensor_peak(one)


def test_every_layer_kind_has_a_case() -> None:
    assert set(RULES) | set(COMPOSITES) <= set(KINDS)


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
    tiny = _candidate(
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
    first = rec["candidates"][0]
    assert any(r["rule"] == "gpu.memory" for r in first["reasons"])
    assert first["memory_bytes"]["total"] <= 0.3e9 * 0.9
