"""Training memory: weights, gradients, optimiser state and a mini-batch of activations (not only weights)."""

from __future__ import annotations

import math
from typing import Any

from advisor.engine.layers import Counts, Shape, count

FLOAT_BYTES = 4  # training in FP32
TOKEN_BYTES = 8  # int64 token ids
# optimiser state per parameter: SGD with momentum keeps one buffer, Adam two (first and second moments)
OPTIMISER_STATES = {"sgd": 1, "adam": 2}


def network_inputs(candidate: dict[str, Any]) -> dict[str, Shape]:
    """The per-example input shape of each network of a candidate (see docs/CANDIDATE.md)."""
    io, networks = candidate["io"], candidate["networks"]
    shape = tuple(io["input_shape"])
    inputs: dict[str, Shape] = {}
    for key in networks:
        if key in ("generator", "decoder"):
            inputs[key] = (io["latent_size"],)
        elif key == "classifier":
            inputs[key] = (networks["rbm"][-1]["args"]["hidden"],)
        else:
            inputs[key] = shape
    return inputs


def count_networks(candidate: dict[str, Any]) -> dict[str, Counts]:
    inputs = network_inputs(candidate)
    return {key: count(layers, inputs[key]) for key, layers in candidate["networks"].items()}


def kept_activations(counts: dict[str, Counts]) -> int:
    """Values kept for backward per example; a GAN's discriminator runs on a real and a generated batch."""
    return sum(c.activations * (2 if key == "discriminator" else 1) for key, c in counts.items())


def breakdown(
    parameters: int,
    activation_values: int,
    input_values: int,
    batch_size: int,
    optimizer: str,
    token_input: bool,
) -> dict[str, int]:
    weights = parameters * FLOAT_BYTES
    activations = batch_size * (
        activation_values * FLOAT_BYTES + input_values * (TOKEN_BYTES if token_input else FLOAT_BYTES)
    )
    result = {
        "weights": weights,
        "gradients": weights,
        "optimizer": weights * OPTIMISER_STATES.get(optimizer, 1),
        "activations": activations,
    }
    result["total"] = sum(result.values())
    return result


def memory_for(candidate: dict[str, Any], *, batch_size: int) -> dict[str, int]:
    """The memory_bytes breakdown of a candidate at another mini-batch size."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    counts = count_networks(candidate)
    return breakdown(
        sum(c.parameters for c in counts.values()),
        kept_activations(counts),
        math.prod(candidate["io"]["input_shape"]),
        batch_size,
        candidate["training"]["optimizer"],
        candidate["io"]["input_dtype"] == "int64",
    )
