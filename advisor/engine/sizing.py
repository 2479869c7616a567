"""How big: capacity that grows with the accuracy target and the amount of data (size.capacity)."""

from __future__ import annotations

from advisor.contract import Reason, TaskSpec
from advisor.engine.rules import reason

LITTLE_DATA = 1_000
MUCH_DATA = 100_000
# size.oversize fires above this many weights per example; the families that can shrink (recurrent widths)
# stay at or below it, so no first candidate is sized beyond what the data can pin down
WEIGHTS_PER_EXAMPLE = 100


# (target, added width) steps of the capacity factor: an accuracy for the supervised tasks; for generation
# the two-sample score (`target.two_sample`: the accuracy means nothing there and widens nothing), whose
# steps were measured on bench advice's 8-Gaussian ring (bench/results/advice_amd-epyc-2c_generation): the
# generators of 64 hidden units scored 0.41-0.46, those of 128 units 0.5-0.7
ACCURACY_STEPS = ((0.9, 0.5), (0.98, 0.25))
TWO_SAMPLE_STEPS = ((0.5, 0.5), (0.8, 0.5))


def target_of(spec: TaskSpec) -> tuple[str, float | None]:
    """The target the sizing reads: (its name, its value or None)."""
    if spec["task"] == "generation":
        return "a two-sample target", spec["target"].get("two_sample")
    return "an accuracy target", spec["target"]["accuracy"]


def capacity(spec: TaskSpec) -> float:
    """A width multiplier in [1, 2]: 1 for little data or a modest target, up to 2 for much data and a
    high target (W §III-B: near inputs/outputs; Goodfellow et al. §5.2: capacity to match the data)."""
    examples = spec["data"]["examples"]
    _, target = target_of(spec)
    if examples < LITTLE_DATA:
        return 1.0
    factor = 1.0
    steps = TWO_SAMPLE_STEPS if spec["task"] == "generation" else ACCURACY_STEPS
    factor += sum(added for level, added in steps if target is not None and target >= level)
    if examples >= MUCH_DATA:
        factor += 0.25
    return min(factor, 2.0)


def capacity_reason(spec: TaskSpec, what: str) -> list[Reason]:
    """size.capacity, when it widened the network (nothing when the base size stands)."""
    factor = capacity(spec)
    if factor == 1.0:
        return []
    examples = spec["data"]["examples"]
    name, value = target_of(spec)
    target = f"{name} of {value:g}" if value is not None else f"no {name.removeprefix('a ')}"
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


def oversize_reason(parameters: int, examples: int) -> Reason | None:
    """`examples`: `targets(spec)`."""
    """W §III-B: more nodes than needed cost accuracy or epochs; warn when weights far outnumber examples."""
    if fits_data(parameters, examples):
        return None
    return reason(
        "size.oversize",
        f"{parameters:,} weights for {examples:,} training labels: far more than the data can pin down. "
        "Expect more epochs or overfitting; prefer the smaller candidate or more data.",
    )


def targets(spec: TaskSpec) -> int:
    """How many values the data gives to fit the weights to: one label an example, or one per step where a
    network predicts every next token (a language model on 10,000 sequences of 32 tokens has 320,000)."""
    data = spec["data"]
    if spec["task"] == "generation" and data["vocab_size"] is not None:
        return int(data["examples"] * data["input_shape"][0])
    return int(data["examples"])


def fits_data(parameters: int, examples: int) -> bool:
    return parameters <= WEIGHTS_PER_EXAMPLE * examples


def shrunk_reason(what: str, before: int, after: int, parameters: int, examples: int) -> Reason:
    """size.capacity, when the data cut a width below what the rules would otherwise give."""
    return reason(
        "size.capacity",
        f"{what} cut from {before:,} to {after:,} to keep the weights ({parameters:,}) within "
        f"{WEIGHTS_PER_EXAMPLE} per training label ({examples:,}): a bigger network would only memorise.",
    )
