"""How big: capacity that grows with the accuracy target and the amount of data (size.capacity)."""

from __future__ import annotations

from typing import Any

from advisor.engine.rules import reason

LITTLE_DATA = 1_000
MUCH_DATA = 100_000
# size.oversize fires above this many weights per example; the families that can shrink (recurrent widths)
# stay at or below it, so no first candidate is sized beyond what the data can pin down
WEIGHTS_PER_EXAMPLE = 100


def capacity(spec: dict[str, Any]) -> float:
    """A width multiplier in [1, 2]: 1 for little data or a modest target, up to 2 for much data and a
    high target (W §III-B: near inputs/outputs; Goodfellow et al. §5.2: capacity to match the data)."""
    examples, accuracy = spec["data"]["examples"], spec["target"]["accuracy"]
    if examples < LITTLE_DATA:
        return 1.0
    factor = 1.0
    if accuracy is not None and accuracy >= 0.9:
        factor += 0.5
    if accuracy is not None and accuracy >= 0.98:
        factor += 0.25
    if examples >= MUCH_DATA:
        factor += 0.25
    return min(factor, 2.0)


def capacity_reason(spec: dict[str, Any], what: str) -> list[dict[str, Any]]:
    """size.capacity, when it widened the network (nothing when the base size stands)."""
    factor = capacity(spec)
    if factor == 1.0:
        return []
    examples, accuracy = spec["data"]["examples"], spec["target"]["accuracy"]
    target = f"an accuracy target of {accuracy:g}" if accuracy is not None else "no accuracy target"
    return [
        reason(
            "size.capacity",
            f"{what} widened {factor:g}x: {target} and {examples:,} examples justify the extra capacity.",
        )
    ]


def round_width(value: float, minimum: int = 1) -> int:
    """Widths rounded up to a multiple of 8 above 16 (GPU-friendly), never below `minimum`."""
    width = max(minimum, int(-(-value // 1)))
    return width if width <= 16 else -(-width // 8) * 8


def oversize_reason(parameters: int, examples: int) -> dict[str, Any] | None:
    """`examples`: `targets(spec)`."""
    """W §III-B: more nodes than needed cost accuracy or epochs; warn when weights far outnumber examples."""
    if fits_data(parameters, examples):
        return None
    return reason(
        "size.oversize",
        f"{parameters:,} weights for {examples:,} training labels: far more than the data can pin down. "
        "Expect more epochs or overfitting; prefer the smaller candidate or more data.",
    )


def targets(spec: dict[str, Any]) -> int:
    """How many values the data gives to fit the weights to: one label an example, or one per step where a
    network predicts every next token (a language model on 10,000 sequences of 32 tokens has 320,000)."""
    data = spec["data"]
    if spec["task"] == "generation" and data["vocab_size"] is not None:
        return int(data["examples"] * data["input_shape"][0])
    return int(data["examples"])


def fits_data(parameters: int, examples: int) -> bool:
    return parameters <= WEIGHTS_PER_EXAMPLE * examples


def shrunk_reason(what: str, before: int, after: int, parameters: int, examples: int) -> dict[str, Any]:
    """size.capacity, when the data cut a width below what the rules would otherwise give."""
    return reason(
        "size.capacity",
        f"{what} cut from {before:,} to {after:,} to keep the weights ({parameters:,}) within "
        f"{WEIGHTS_PER_EXAMPLE} per training label ({examples:,}): a bigger network would only memorise.",
    )
