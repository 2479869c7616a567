"""From a family's draft (layer lists, io, reasons) to the contract's candidate dict, counted exactly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.contract import Layer
from advisor.engine.memory import count_networks, kept_activations, memory_for, resident_for
from advisor.engine.training import setup


@dataclass
class Draft:
    family: str
    depth: str  # "shallow" or "deep"
    networks: dict[str, list[Layer]]
    hidden_sizes: list[int]
    io: dict[str, Any]
    loss: str
    reasons: list[dict[str, Any]] = field(default_factory=list)
    published: str | None = None
    # the rules expect it to reach the target: among such drafts, the one the device is predicted to train
    # soonest comes first (ordering.py, rule net.time.first)
    contends: bool = False


def io_dict(
    input_shape: list[int],
    target: str,
    outputs: int | None,
    *,
    vocab_size: int | None = None,
    latent_size: int | None = None,
) -> dict[str, Any]:
    return {
        "input_shape": list(input_shape),
        "input_dtype": "int64" if vocab_size is not None else "float32",
        "vocab_size": vocab_size,
        "target": target,
        "outputs": outputs,
        "latent_size": latent_size,
    }


def to_candidate(draft: Draft, spec: dict[str, Any]) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "family": draft.family,
        "depth": draft.depth,
        "published": draft.published,
        "networks": draft.networks,
        "hidden_sizes": draft.hidden_sizes,
        "io": draft.io,
    }
    if draft.published is not None:
        key = (draft.published, tuple(draft.io["input_shape"]), draft.io["outputs"])
        parameters, flops, activations = _published_counts(key, candidate)
    else:
        by_key = count_networks(candidate)
        counts = by_key.values()
        parameters = sum(c.parameters for c in counts)
        flops = sum(c.flops for c in counts)
        activations = kept_activations(by_key)
    training, training_reasons = setup(
        draft.family, draft.loss, draft.io["input_shape"], spec, draft.published
    )
    candidate["parameters"] = parameters
    candidate["flops_per_example"] = flops
    candidate["activations_per_example"] = activations
    candidate["training"] = training
    device = "cuda" if spec["hardware"].get("gpu") else "cpu"
    candidate["memory_bytes"] = memory_for(candidate, batch_size=training["batch_size"], device=device)
    # the host process's resident set when training on the CPU (heap fragmentation included); None on a GPU
    candidate["resident_bytes"] = (
        resident_for(candidate, batch_size=training["batch_size"]) if device == "cpu" else None
    )
    candidate["reasons"] = [*draft.reasons, *training_reasons]
    return candidate


_PUBLISHED: dict[tuple[Any, ...], tuple[int, int, int]] = {}


def _published_counts(key: tuple[Any, ...], candidate: dict[str, Any]) -> tuple[int, int, int]:
    """Published networks are large and always the same for a shape and class count: count them once."""
    if key not in _PUBLISHED:
        counts = count_networks(candidate).values()
        if len(_PUBLISHED) > 256:
            _PUBLISHED.clear()
        _PUBLISHED[key] = (
            sum(c.parameters for c in counts),
            sum(c.flops for c in counts),
            sum(c.activations for c in counts),
        )
    return _PUBLISHED[key]


def rebatch(candidate: dict[str, Any], batch_size: int, *, device: str = "cuda") -> None:
    """Change a candidate's mini-batch in place (and its memory) when the first does not fit the GPU."""
    candidate["training"]["batch_size"] = batch_size
    candidate["memory_bytes"] = memory_for(candidate, batch_size=batch_size, device=device)
