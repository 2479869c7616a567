"""The mini-batch from the time model (rule batch.profiled) and the choice a measurement makes instead.

Larger batches cost less per example until the device is busy; past that point they only cost
generalisation (Keskar et al. 2017, "On large-batch training for deep learning": large batches converge to
sharp minima that generalise worse; Masters & Luschi 2018, "Revisiting small batch training": the best
results came with batches of 2 to 32). So the batch is the smallest power of two whose seconds per example
are within BATCH_TOLERANCE of the fastest, between BATCH_MIN and the rules' own start (batch.start), never
beyond the data set or the memory. The same choice reads a calibration's measured seconds per example
(`smallest_near_fastest`), so the model's and the measurement's batches are judged alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from advisor.contract import Candidate, Estimate, HardwarePlan, TaskSpec
from advisor.engine.candidate import rebatch
from advisor.engine.costmodel import step_cost
from advisor.engine.families import family_of
from advisor.engine.intervals import ratio_text, ratios_for
from advisor.engine.memory import memory_for
from advisor.engine.profile import DeviceProfile
from advisor.engine.rules import reason
from advisor.engine.training import start_batch
from advisor.engine.units import duration, nbytes, plural

# the smallest of batch.start's sizes (S used 16 for AlexNet and ResNet-50), inside Masters & Luschi's 2-32
BATCH_MIN = 16
BATCH_MAX = 256  # Keskar et al.'s "small batch" (and twice batch.start's largest, 128 for LSTMs)
# Keskar et al.'s "large batch" was 10% of the training data: stay below it, so an epoch keeps 10+ steps
LARGE_BATCH_SHARE = 0.10
BATCH_TOLERANCE = 0.10  # within 10% of the fastest per example counts as "as fast"
CITATION = "Keskar et al. 2017; Masters & Luschi 2018"


def smallest_near_fastest(per_example: Mapping[int, float], tolerance: float = BATCH_TOLERANCE) -> int:
    """The smallest batch whose seconds per example are within `tolerance` of the fastest one's."""
    best = min(per_example.values())
    return min(b for b, seconds in per_example.items() if seconds <= best * (1.0 + tolerance))


Known = dict[tuple[int, int], float]  # (batch, threads) -> seconds per step, for one candidate and profile


def step_seconds(
    candidate: Candidate, batch: int, threads: int, profile: DeviceProfile, known: Known | None = None
) -> float:
    """step_cost's seconds, remembered in `known` (one recommend() asks for some figures twice)."""
    if known is None:
        return step_cost(candidate, batch_size=batch, threads=threads, profile=profile).seconds
    if (batch, threads) not in known:
        known[batch, threads] = step_cost(
            candidate, batch_size=batch, threads=threads, profile=profile
        ).seconds
    return known[batch, threads]


def largest_batch(candidate: Mapping[str, Any], examples: int) -> int:
    """The largest batch batch.profiled considers for `candidate` on a data set of `examples`: never above
    the rules' own start (batch.start). The profile may lower the batch where larger ones do not pay, not
    raise it: larger batches need more epochs, which seconds per example do not show. On digits (1,797
    examples, bench advice's three splits, one run each) the profile's 128 scored 0.955, 0.989 and 0.989
    against 0.972, 0.989 and 0.992 at the rule's 64, in no less wall time."""
    start, _ = start_batch(family_of(candidate), list(candidate["io"]["input_shape"]), examples)
    return min(BATCH_MAX, int(examples * LARGE_BATCH_SHARE), start)


def powers_of_two(lowest: int, highest: int) -> list[int]:
    sizes, b = [], 1
    while b <= highest:
        if b >= lowest:
            sizes.append(b)
        b *= 2
    return sizes


def profiled_batch(
    spec: TaskSpec,
    plan: HardwarePlan,
    candidate: Candidate,
    profile: DeviceProfile,
    device: str,
    *,
    memory_limit: float,
    known: Known | None = None,
    threads: int = 1,
) -> None:
    """Set the candidate's batch from the profile's predicted seconds per example at `threads`, among the
    powers of two from BATCH_MIN to BATCH_MAX that the data set and `memory_limit` (bytes) allow; replace its
    batch.start reason with one that shows the figures."""
    examples = int(spec["data"]["examples"])
    on_cpu = plan["device"] == "cpu"
    kind = "cpu" if on_cpu else "cuda"
    sizes = powers_of_two(BATCH_MIN, largest_batch(candidate, examples))
    if len(sizes) < 2:  # nothing to choose between: the rule's start stands
        return
    per_example = {b: step_seconds(candidate, b, threads, profile, known) / b for b in sizes}
    # memory grows with the batch: only the chosen one (and, where it does not fit, the next smaller) is
    # replayed, which keeps recommend() fast
    fits = dict(per_example)
    chosen = wanted = smallest_near_fastest(fits)
    memory = memory_for(candidate, batch_size=chosen, device=kind)
    while memory["total"] > memory_limit:
        fits = {b: t for b, t in fits.items() if b < chosen}
        if not fits:
            return
        chosen = smallest_near_fastest(fits)
        memory = memory_for(candidate, batch_size=chosen, device=kind)
    fastest = min(fits, key=fits.__getitem__)
    candidate["training"]["batch_size"] = chosen
    candidate["memory_bytes"] = memory
    shown = ", ".join(f"{duration(per_example[b])} at {b}" for b in sizes)
    text = (
        f"Train with mini-batches of {chosen}: the profile of {device} predicts {shown} per example "
        f"(profiled, 90% interval {ratio_text(ratios_for('profiled', kind))})"
        + (f" on {plural(threads, 'thread')}; " if on_cpu else "; ")
        + (
            f"{chosen} is the smallest within {BATCH_TOLERANCE:.0%} of the fastest ({fastest}), and smaller "
            f"batches generalise better ({CITATION})."
            if chosen != fastest
            else f"{chosen} is the fastest per example."
        )
        + (
            f" A batch of {wanted} would not fit the {nbytes(memory_limit)} of usable memory."
            if chosen != wanted
            else ""
        )
        + (
            f" Your {examples:,} examples cap it at {sizes[-1]} (below a tenth of the data, Keskar et al.'s "
            "large batch)."
            if examples * LARGE_BATCH_SHARE < BATCH_MAX
            else ""
        )
    )
    candidate["reasons"] = [r for r in candidate["reasons"] if r["rule"] != "batch.start"]
    candidate["reasons"].insert(0, reason("batch.profiled", text))


def follow_batch(candidate: Candidate, measured: Estimate, *, device: str = "cpu") -> Candidate | None:
    """The candidate at the batch a calibration measured best (its `measured_at.best_batch`, chosen by
    `smallest_near_fastest` over the sweep), with the reason; None where the plan's batch stands."""
    at = measured.get("measured_at")
    best = at.get("best_batch") if at else None
    planned = int(candidate["training"]["batch_size"])
    if not best or int(best) == planned:
        return None
    text = (
        f"Train with mini-batches of {best}: calibration #{measured.get('calibration')} measured it the "
        f"smallest within {BATCH_TOLERANCE:.0%} of the fastest per example, where the plan had said "
        f"{planned}."
    )
    reasons = [r for r in candidate["reasons"] if r["rule"] not in ("batch.start", "batch.profiled")]
    followed: Candidate = {
        **candidate,
        "training": {**candidate["training"]},
        "reasons": [reason("plan.measured", text)],
    }
    rebatch(followed, int(best), device=device)
    followed["reasons"] += reasons
    return followed
