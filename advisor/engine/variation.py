"""A candidate with a stated change (issue 25 item 4, the probe's next step): every hidden width multiplied
(`widen`; `scaled` by any factor, for bench's searches), or weight decay added to its training
(`with_weight_decay`); `vary` applies a stored variation ({"width": 2, "weight_decay": 0.001},
docs/CONTRACT.md) to the recommendation's candidate.

A varied candidate is rebuilt and counted as `candidate.to_candidate` counts a draft (parameters, FLOPs, kept
values, memory at its batch), so a probe's parameter cap, its threads and a code download read the network it
really trains. Its `estimate` keeps the recommendation's: it was timed for the candidate as recommended.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, cast

from advisor.contract import Candidate, Layer, LayerArgs
from advisor.engine.families.roles import MODEL
from advisor.engine.memory import count_networks, kept_activations, memory_for, resident_for

# A layer's width it gives (grows with the network) and the width it takes (follows the layer before).
GROW = ("out_features", "out_channels", "hidden_size", "embedding_dim")
TAKE = ("in_features", "in_channels", "input_size")
FOLLOW = ("num_features",)  # batch-norm: the width of the layer before, no weights of its own to size

# Weight decay a next step adds to an over-fitting candidate, by optimiser: 1e-3 for Adam-style updates
# (AdamW's default is 1e-2, scaled by the learning rate; 1e-3 is a mild first step), 5e-4 for SGD (the
# ResNet and VGG papers' value with momentum).
WEIGHT_DECAY = {"sgd": 5e-4}
DEFAULT_WEIGHT_DECAY = 1e-3
VARIATION_KEYS = ("width", "weight_decay")


class CannotVary(ValueError):
    """The candidate cannot take this change (a published network, several networks, a broken shape)."""


def weight_decay_for(optimizer: str) -> float:
    return WEIGHT_DECAY.get(optimizer.lower(), DEFAULT_WEIGHT_DECAY)


def _times(value: object, factor: float) -> int:
    return max(1, round(int(cast(int, value)) * factor))


def widen_layers(
    layers: list[Layer], factor: float, *, data_in: bool = True, keep_out: bool = True
) -> list[Layer]:
    """`layers` with every hidden width multiplied by `factor` (rounded, at least 1): a layer's input width
    stays while it is the data's (`data_in`), the last weighted layer's output stays where `keep_out` (the
    network's outputs); a residual block's body and shortcut both read the block's input. Integer factors
    keep a flattened feature map's width (channels x positions) exact."""
    weighted = [i for i, item in enumerate(layers) if any(k in item["args"] for k in GROW + TAKE)]
    last = weighted[-1] if weighted and keep_out else None
    out: list[Layer] = []
    for i, item in enumerate(layers):
        # keys named at run time: a plain dict of the args, typed again as LayerArgs when built
        args: dict[str, object] = dict(item["args"])
        if item["kind"] == "Residual":
            for part in ("body", "shortcut"):
                inner = cast(list[Layer], args[part])
                args[part] = widen_layers(inner, factor, data_in=data_in, keep_out=False)
            data_in = False
        elif i in weighted:
            for key in TAKE if not data_in else ():
                if key in args:
                    args[key] = _times(args[key], factor)
            for key in GROW if i != last else ():
                if key in args:
                    args[key] = _times(args[key], factor)
            data_in = False
        elif not data_in:
            for key in FOLLOW:
                if key in args:
                    args[key] = _times(args[key], factor)
        out.append({"kind": item["kind"], "args": cast(LayerArgs, args)})
    return out


def recount(candidate: Candidate) -> Candidate:
    """The candidate's counts and memory for its (changed) networks and training, as to_candidate makes
    them; CannotVary where a layer no longer fits the one before."""
    try:
        by_key = count_networks(candidate)
    except ValueError as exc:
        raise CannotVary(str(exc)) from exc
    counts = by_key.values()
    candidate["parameters"] = sum(c.parameters for c in counts)
    candidate["flops_per_example"] = sum(c.flops for c in counts)
    candidate["activations_per_example"] = kept_activations(by_key)
    batch = int(candidate["training"]["batch_size"])
    cpu = candidate.get("resident_bytes") is not None  # to_candidate: None on a GPU plan
    candidate["memory_bytes"] = memory_for(candidate, batch_size=batch, device="cpu" if cpu else "cuda")
    if cpu:
        candidate["resident_bytes"] = resident_for(candidate, batch_size=batch)
    return candidate


def widen(candidate: Candidate, factor: int) -> Candidate:
    """A copy of the candidate with every hidden width x`factor` (inputs and outputs kept), recounted: the
    probe's next step, which only widens, by whole numbers, a network of the rules' own making."""
    if factor < 1 or factor != int(factor):
        raise CannotVary(f"a width factor is a whole number from 1, not {factor}")
    if candidate.get("published"):
        raise CannotVary(f"{candidate['published']} is a published network: its widths are its own")
    return scaled(candidate, factor)


def scaled(candidate: Candidate, factor: float) -> Candidate:
    """A copy of the candidate with every hidden width x`factor`, rounded (x0.5 narrows; bench's searches
    try both ways), recounted; CannotVary for a candidate of several networks or a broken shape."""
    if set(candidate["networks"]) != {MODEL}:
        raise CannotVary(f"a {candidate['family']} has several networks ({', '.join(candidate['networks'])})")
    wide = copy.deepcopy(candidate)
    wide["networks"] = {MODEL: widen_layers(candidate["networks"][MODEL], factor)}
    wide["hidden_sizes"] = [_times(s, factor) for s in candidate.get("hidden_sizes") or []]
    return recount(wide)


def with_weight_decay(candidate: Candidate, decay: float) -> Candidate:
    """A copy of the candidate whose optimiser decays its weights by `decay` (memory unchanged: torch's
    optimisers apply it in the update's own buffers)."""
    if decay < 0:
        raise CannotVary(f"weight decay is not negative: {decay}")
    varied = copy.deepcopy(candidate)
    varied["training"]["weight_decay"] = float(decay)
    return varied


def vary(candidate: Candidate, variation: Mapping[str, Any] | None) -> Candidate:
    """The candidate with a stored variation applied ({} or None: the candidate itself, copied)."""
    variation = variation or {}
    unknown = sorted(set(variation) - set(VARIATION_KEYS))
    if unknown:
        raise CannotVary(f"unknown variation {', '.join(unknown)}")
    varied = copy.deepcopy(candidate)
    width = int(variation.get("width") or 1)
    if width != 1:
        varied = widen(varied, width)
    if variation.get("weight_decay") is not None:
        varied = with_weight_decay(varied, float(variation["weight_decay"]))
    return varied


def describe(variation: Mapping[str, Any] | None) -> str:
    """The variation in words ("" for none): "every hidden width x2, weight decay 0.001"."""
    variation = variation or {}
    parts = []
    if int(variation.get("width") or 1) != 1:
        parts.append(f"every hidden width x{int(variation['width'])}")
    if variation.get("weight_decay") is not None:
        parts.append(f"weight decay {float(variation['weight_decay']):g}")
    return ", ".join(parts)
