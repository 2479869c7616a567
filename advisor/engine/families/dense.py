"""Fully connected families: FFN (shallow and deep), auto-encoder, RBM, DBN."""

from __future__ import annotations

import math
from typing import Any

from advisor.engine.candidate import Draft, io_dict
from advisor.engine.layers import Layer, layer
from advisor.engine.rules import reason
from advisor.engine.sizing import capacity, capacity_reason, round_width


def head(spec: dict[str, Any]) -> tuple[str, int | None, str]:
    """(io target, outputs, loss) for the spec's goal."""
    goal, outputs = spec["goal"], spec["data"]["outputs"]
    if goal == "regress":
        return "value", outputs, "mse"
    return "class", outputs, "cross_entropy"


def _flat_front(shape: list[int]) -> list[Layer]:
    return [layer("Flatten")] if len(shape) > 1 else []


def ffn(spec: dict[str, Any], *, deep: bool) -> Draft:
    shape = spec["data"]["input_shape"]
    inputs = math.prod(shape)
    target, outputs, loss = head(spec)
    assert outputs is not None
    width = round_width(max(inputs, outputs) * capacity(spec))
    sizes = [width, max(outputs, width // 2), max(outputs, width // 4)] if deep else [width]
    model: list[Layer] = _flat_front(shape)
    previous = inputs
    for size in sizes:
        model += [layer("Linear", in_features=previous, out_features=size), layer("ReLU")]
        previous = size
    model.append(layer("Linear", in_features=previous, out_features=outputs))
    reasons = [
        reason(
            "size.ffn.hidden",
            f"{'First hidden layer' if deep else 'Hidden layer'}: {width:,} nodes for {inputs:,} inputs and "
            f"{outputs:,} outputs (at least as many as inputs, not far more).",
        ),
        *capacity_reason(spec, "Hidden layer"),
    ]
    return Draft(
        "ffn",
        "deep" if deep else "shallow",
        {"model": model},
        sizes,
        io_dict(shape, target, outputs),
        loss,
        reasons,
    )


def code_size(inputs: int, spec: dict[str, Any]) -> int:
    """Auto-encoder code: a quarter of the inputs, up to half for a high target or much data; < inputs."""
    return max(1, min(inputs - 1, round(inputs * capacity(spec) / 4)))


def ae(spec: dict[str, Any], *, deep: bool) -> Draft:
    shape = spec["data"]["input_shape"]
    inputs = math.prod(shape)
    code = code_size(inputs, spec)
    sizes = (
        [max(code + 1, (inputs + code) // 2), code, max(code + 1, (inputs + code) // 2)] if deep else [code]
    )
    model: list[Layer] = _flat_front(shape)
    previous = inputs
    for size in sizes:
        model += [layer("Linear", in_features=previous, out_features=size), layer("ReLU")]
        previous = size
    model.append(layer("Linear", in_features=previous, out_features=inputs))
    if len(shape) > 1:
        model.append(layer("Reshape", shape=list(shape)))
    reasons = [
        reason(
            "size.ae.bottleneck",
            f"Code layer of {code:,} units for {inputs:,} inputs ({inputs / code:.3g}x smaller); the output "
            "rebuilds all inputs.",
        ),
        *capacity_reason(spec, "Code layer"),
    ]
    return Draft(
        "ae",
        "deep" if deep else "shallow",
        {"model": model},
        sizes,
        io_dict(shape, "input", None),
        "mse",
        reasons,
    )


def rbm(spec: dict[str, Any]) -> Draft:
    inputs = math.prod(spec["data"]["input_shape"])
    hidden = code_size(inputs, spec) if spec["goal"] == "compress" else round_width(inputs * capacity(spec))
    reasons = [
        reason(
            "net.shallow.first",
            f"A restricted Boltzmann machine: {inputs:,} visible and {hidden:,} hidden units, trained "
            "without labels by contrastive divergence; its hidden units become learned features.",
        )
    ]
    model = [layer("RBM", visible=inputs, hidden=hidden)]
    return Draft(
        "rbm", "shallow", {"model": model}, [hidden], io_dict([inputs], "none", None), "cd1", reasons
    )


def dbn(spec: dict[str, Any]) -> Draft:
    """Hinton, Osindero & Teh 2006: RBMs stacked 784-500-500-2000 for MNIST; here scaled to the inputs."""
    inputs = math.prod(spec["data"]["input_shape"])
    target, outputs, _ = head(spec)
    assert outputs is not None
    first = round_width(min(max(inputs * 0.64, 2 * outputs, 16), 4096) * capacity(spec))
    sizes = [first, first, 4 * first]
    rbms: list[Layer] = []
    previous = inputs
    for size in sizes:
        rbms.append(layer("RBM", visible=previous, hidden=size))
        previous = size
    classifier = [layer("Linear", in_features=previous, out_features=outputs)]
    labelled = spec["data"]["labelled_fraction"]
    reasons = [
        reason(
            "net.vision.dbn" if spec["task"] == "vision" else "net.pretrain.unlabelled",
            f"A deep belief network: three RBMs ({inputs:,}-{'-'.join(f'{s:,}' for s in sizes)}, after "
            "Hinton et "
            f"al. 2006) pretrained on all {spec['data']['examples']:,} examples without labels, then "
            f"fine-tuned on the {labelled:.0%} that carry one.",
        )
    ]
    return Draft(
        "dbn",
        "deep",
        {"rbm": rbms, "classifier": classifier},
        sizes,
        io_dict([inputs], target, outputs),
        "cd1",
        reasons,
    )
