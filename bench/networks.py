"""The six networks of Shi et al. (2016) as the advisor's candidate dicts (see docs/CANDIDATE.md).

Sizes are those of the authors' public harness (DLBench), not the paper's Table 2 parameter counts, which do
not match its own layer sizes (FCN-5: Table 2 says 55 M, the layers give about 118 M). Each definition says
where it came from in `definition`, and the report prints parameters and FLOPs next to the paper's figures.

`scale` (< 1) shrinks widths for tests only; the network keeps its name so the paper's cells still line up.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from advisor.calibration.examples import io_fields, layer
from advisor.contract import Trainable
from bench import cnn_networks

NAMES = ("FCN-5", "FCN-8", "AlexNet", "ResNet-50", "LSTM-32", "LSTM-64")
BATCH = {"FCN-5": 64, "FCN-8": 64, "AlexNet": 16, "ResNet-50": 16, "LSTM-32": 128, "LSTM-64": 128}
# Table 2 of the paper, for the report only.
PAPER_PARAMETERS = {
    "FCN-5": "55 M",
    "FCN-8": "58 M",
    "AlexNet": "61 M",
    "ResNet-50": "3.8 G (sic)",
    "LSTM-32": "13 M",
    "LSTM-64": "13 M",
}

FCN_FEATURES = 26752  # input and output width of DLBench's FCN (Caffe definition)
FCN_HIDDEN = 2048
LSTM_VOCAB = 10000
LSTM_HIDDEN = 512  # embedding and hidden size: gives Table 2's ~13 M parameters


def _scaled(n: int, scale: float) -> int:
    return max(2, round(n * scale))


def _candidate(
    *,
    name: str,
    family: str,
    layers: list[dict[str, Any]],
    hidden_sizes: list[int],
    parameters: int,
    flops: int,
    io: dict[str, Any],
    definition: str,
) -> Trainable:
    batch = BATCH[name]
    return {
        "family": family,
        "depth": "deep",
        "published": None,
        "networks": {"model": layers},
        "hidden_sizes": hidden_sizes,
        "parameters": parameters,
        "flops_per_example": flops,
        "training": {
            "batch_size": batch,
            "init_scale": 0.1,
            "optimizer": "sgd",
            "learning_rate": 0.01,
            "momentum": 0.9,  # as the engine's candidates, so all six step alike
            "epochs": 1,
            "loss": "cross_entropy",
        },
        "memory_bytes": {
            "weights": 4 * parameters,
            "gradients": 4 * parameters,
            "optimizer": 0,
            "activations": 0,
            "total": 8 * parameters,
        },
        "estimate": {
            "seconds_per_batch": 0.0,
            "seconds_per_epoch": 0.0,
            "seconds_to_train": 0.0,
            "basis": "analytic",
        },
        "reasons": [
            {
                "rule": "bench.shi2016",
                "text": f"Shi et al. (2016) benchmark network {name}.",
                "source": "S §3",
            }
        ],
        "io": io,
        "bench": {"name": name, "definition": definition},
    }


def fcn(name: str, hidden_layers: int, scale: float = 1.0) -> Trainable:
    """3 (FCN-5) or 6 (FCN-8) sigmoid hidden layers of 2048 units between 26,752 inputs and 26,752 classes."""
    features, hidden = _scaled(FCN_FEATURES, scale), _scaled(FCN_HIDDEN, scale)
    widths = [features] + [hidden] * hidden_layers + [features]
    layers: list[dict[str, Any]] = []
    parameters = flops = 0
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
        layers.append(layer("Linear", in_features=fan_in, out_features=fan_out))
        if i < hidden_layers:
            layers.append(layer("Sigmoid"))
        parameters += fan_in * fan_out + fan_out
        flops += 2 * fan_in * fan_out
    return _candidate(
        name=name,
        family="ffn",
        layers=layers,
        hidden_sizes=[hidden] * hidden_layers,
        parameters=parameters,
        flops=flops,
        io=io_fields([features], "class", features),
        definition=f"bench: DLBench FCN, {hidden_layers} x Linear({hidden}) + Sigmoid, {features} in/out",
    )


def lstm(name: str, steps: int, scale: float = 1.0) -> Trainable:
    """Embedding(10000, 512) -> 2-layer LSTM(512) -> Linear(512, 10000) at every step, `steps` tokens."""
    vocab, hidden = _scaled(LSTM_VOCAB, scale), _scaled(LSTM_HIDDEN, scale)
    layers = [
        layer("Embedding", num_embeddings=vocab, embedding_dim=hidden),
        layer("LSTM", input_size=hidden, hidden_size=hidden, num_layers=2, batch_first=True),
        layer("Linear", in_features=hidden, out_features=vocab),
    ]
    # per LSTM layer: weight_ih [4h, in], weight_hh [4h, h], two biases [4h]
    lstm_parameters = 2 * (4 * hidden * (hidden + hidden) + 8 * hidden)
    parameters = vocab * hidden + lstm_parameters + hidden * vocab + vocab
    # per step: the gate GEMMs of both layers, then the vocabulary projection; embedding lookups are free
    flops = steps * (2 * 2 * 4 * hidden * (hidden + hidden) + 2 * hidden * vocab)
    return _candidate(
        name=name,
        family="lstm",
        layers=layers,
        hidden_sizes=[hidden, hidden],
        parameters=parameters,
        flops=flops,
        io=io_fields([steps], "class_per_step", vocab, input_dtype="int64", vocab_size=vocab),
        definition=f"bench: Embedding({vocab}, {hidden}), LSTM({hidden}) x 2, Linear({vocab}) per step",
    )


BUILDERS: dict[str, Callable[[float], Trainable]] = {
    "FCN-5": lambda scale: fcn("FCN-5", 3, scale),
    "FCN-8": lambda scale: fcn("FCN-8", 6, scale),
    "LSTM-32": lambda scale: lstm("LSTM-32", 32, scale),
    "LSTM-64": lambda scale: lstm("LSTM-64", 64, scale),
}


def candidate(name: str, scale: float = 1.0) -> Trainable:
    """The candidate dict of one of the six networks (KeyError for an unknown name)."""
    if name not in NAMES:
        raise KeyError(f"unknown network {name!r}; choose from {', '.join(NAMES)}")
    if name in BUILDERS:
        return BUILDERS[name](scale)
    # The CNNs come from the engine, as it publishes them.
    return cnn_networks.candidate(name, BATCH[name])  # `scale` does not apply to these
