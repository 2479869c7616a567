"""From a family's draft (layer lists, io, reasons) to the contract's candidate dict, counted exactly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.contract import Candidate, Estimate, Io, Layer, Reason, TaskSpec, Trainable
from advisor.engine.memory import count_networks, kept_activations, memory_for, resident_for
from advisor.engine.training import setup


@dataclass
class Draft:
    family: str
    depth: str  # "shallow" or "deep"
    networks: dict[str, list[Layer]]
    hidden_sizes: list[int]
    io: Io
    loss: str
    reasons: list[Reason] = field(default_factory=list)
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
) -> Io:
    return {
        "input_shape": list(input_shape),
        "input_dtype": "int64" if vocab_size is not None else "float32",
        "vocab_size": vocab_size,
        "target": target,
        "outputs": outputs,
        "latent_size": latent_size,
    }


def to_candidate(draft: Draft, spec: TaskSpec) -> Candidate:
    """The draft counted (parameters, FLOPs, kept values), trained as the rules set up, its memory replayed;
    its `estimate` is the recommendation's to fill (a placeholder until then)."""
    training, training_reasons = setup(
        draft.family, draft.loss, draft.io["input_shape"], spec, draft.published
    )
    networks: Trainable = {
        "family": draft.family,
        "networks": draft.networks,
        "io": draft.io,
        "training": training,
        "published": draft.published,
    }
    if draft.published is not None:
        key = (draft.published, tuple(draft.io["input_shape"]), draft.io["outputs"])
        parameters, flops, activations = _published_counts(key, networks)
    else:
        by_key = count_networks(networks)
        counts = by_key.values()
        parameters = sum(c.parameters for c in counts)
        flops = sum(c.flops for c in counts)
        activations = kept_activations(by_key)
    device = "cuda" if spec["hardware"].get("gpu") else "cpu"
    return {
        "family": draft.family,
        "depth": draft.depth,
        "published": draft.published,
        "networks": draft.networks,
        "hidden_sizes": draft.hidden_sizes,
        "io": draft.io,
        "parameters": parameters,
        "flops_per_example": flops,
        "activations_per_example": activations,
        "training": training,
        "memory_bytes": memory_for(networks, batch_size=training["batch_size"], device=device),
        # the host process's resident set training on the CPU (heap fragmentation included); None on a GPU
        "resident_bytes": (
            resident_for(networks, batch_size=training["batch_size"]) if device == "cpu" else None
        ),
        "reasons": [*draft.reasons, *training_reasons],
        "estimate": _untimed(),
    }


def _untimed() -> Estimate:
    """A candidate's estimate until recommend() times it under the plan, as it does every candidate."""
    return {"seconds_per_batch": 0.0, "seconds_per_epoch": 0.0, "seconds_to_train": 0.0, "basis": "catalog"}


_PUBLISHED: dict[tuple[Any, ...], tuple[int, int, int]] = {}


def _published_counts(key: tuple[Any, ...], candidate: Trainable) -> tuple[int, int, int]:
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


def rebatch(candidate: Candidate, batch_size: int, *, device: str = "cuda") -> None:
    """Change a candidate's mini-batch in place (and its memory) when the first does not fit the GPU."""
    candidate["training"]["batch_size"] = batch_size
    candidate["memory_bytes"] = memory_for(candidate, batch_size=batch_size, device=device)
