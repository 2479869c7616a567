"""How big: capacity that grows with the accuracy target and the amount of data (size.capacity)."""

from __future__ import annotations

from typing import Any

from advisor.engine.rules import reason

LITTLE_DATA = 1_000
MUCH_DATA = 100_000


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
    """W §III-B: more nodes than needed cost accuracy or epochs; warn when weights far outnumber examples."""
    if parameters <= 100 * examples:
        return None
    return reason(
        "size.oversize",
        f"{parameters:,} weights for {examples:,} examples: far more than the data can pin down. Expect more "
        "epochs or overfitting; prefer the smaller candidate or more data.",
    )
