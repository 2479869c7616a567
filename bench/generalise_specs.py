"""The seeded generator of `python -m bench generalise`: task descriptions drawn across the whole TaskSpec
space (every task and goal, data sizes, shapes, outputs, vocabularies), the engine's first candidates for
each, and a batch for each capped so that a step measures in well under a second here.

Two seeds, kept apart so that the estimate is judged on networks it was not built on:
- BUILD_SEED: what the cost model, the profile and the intervals' ratios were developed and fitted on;
- EVALUATION_SEEDS: the evaluations, each run once on a quiet machine after the model and the intervals it
  judges were fixed, never while building (nor by tests: they use other seeds and assert nothing about
  accuracy). A seed whose run has shown where the model misses has informed the model from then on, so the
  next change is judged on the next seed (bench/README.md lists each seed's run); EVALUATION_SEED is the
  latest.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

from advisor.engine import recommend
from advisor.engine.errors import SpecError

BUILD_SEED = 1
EVALUATION_SEEDS = (
    24_004,
    24_005,
    24_006,
    24_007,
    24_008,
    24_009,
    24_010,
    24_011,
    24_012,
    24_013,
    24_014,
    24_015,
    24_016,
    24_017,
    24_018,
    24_019,
    24_020,
    24_021,
    24_022,
    24_023,
    24_024,
    24_025,
    24_026,
    24_027,
    24_028,
    24_029,
    24_030,
    24_031,
)
EVALUATION_SEED = EVALUATION_SEEDS[-1]
HARDWARE = {"cpu_cores": 2, "ram_gb": 16}  # this machine's description, as the wizard would fill it in
# a step of at most this many forward FLOPs (per batch, every network of the step counted as often as the
# step runs it) and this many parameters: about 0.1-0.3 s a step at one thread on a 2-core VM, so that a
# measurement of a configuration (5 steps at least) takes about a second
MAX_STEP_FLOPS = 3e9
MAX_PARAMETERS = 40_000_000
MIN_BATCH = 4
# forward passes a step makes of the candidate's counted FLOPs, beyond backprop's one: a GAN runs its
# discriminator three times, CD-1 five products of the weights (crude, only to size the batch)
STEP_PASSES = {"gan": 3.0, "rbm": 2.0, "dbn": 3.0}


@dataclass(frozen=True)
class Configuration:
    """One generated network at one batch (measured at each thread count by the bench)."""

    name: str  # "<spec number>-<candidate index>-<family>"
    spec: dict[str, Any]
    index: int  # the candidate's place in the engine's answer
    candidate: dict[str, Any]
    batch: int

    @property
    def family(self) -> str:
        return str(self.candidate["family"])


def _log_int(rng: random.Random, low: float, high: float) -> int:
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


def _labelled(rng: random.Random) -> float:
    return 1.0 if rng.random() < 0.75 else round(rng.uniform(0.05, 0.45), 2)


def _supervised(rng: random.Random, data: dict[str, Any], goals: tuple[str, ...]) -> str:
    goal = rng.choice(goals)
    if goal == "classify":
        data["outputs"] = _log_int(rng, 2, 500)
        data["labelled_fraction"] = _labelled(rng)
    elif goal == "regress":
        data["outputs"] = _log_int(rng, 1, 16)
    return goal


def random_spec(rng: random.Random) -> dict[str, Any]:
    """A TaskSpec drawn across the contract's space (it may still be invalid: the caller draws again)."""
    task = rng.choice(("tabular", "vision", "sequence", "generation"))
    data: dict[str, Any] = {"examples": _log_int(rng, 200, 2_000_000)}
    spec: dict[str, Any] = {"task": task, "data": data, "hardware": HARDWARE}
    if task == "tabular":
        data["input_shape"] = [_log_int(rng, 2, 4000)]
        spec["goal"] = _supervised(rng, data, ("classify", "classify", "regress", "compress"))
    elif task == "vision":
        side = _log_int(rng, 8, 96)
        ratio = rng.choice((1.0, 1.0, 0.75, 1.33))
        data["input_shape"] = [rng.choice((1, 3, 3, 4)), side, max(4, round(side * ratio))]
        if rng.random() < 0.05:  # the ImageNet setting: published networks
            data["input_shape"], data["outputs"] = [3, 224, 224], 1000
            spec["goal"] = "classify"
        else:
            spec["goal"] = _supervised(rng, data, ("classify", "classify", "regress", "compress"))
    elif task == "sequence":
        if rng.random() < 0.5:
            data["input_shape"] = [_log_int(rng, 8, 400)]
            data["vocab_size"] = _log_int(rng, 50, 50_000)
        else:
            data["input_shape"] = [_log_int(rng, 4, 300), _log_int(rng, 1, 128)]
        spec["goal"] = _supervised(rng, data, ("classify", "classify", "regress"))
    else:
        shape = rng.choice(("vector", "image", "series", "tokens"))
        if shape == "vector":
            data["input_shape"] = [_log_int(rng, 2, 2000)]
        elif shape == "image":
            side = _log_int(rng, 8, 64)
            data["input_shape"] = [rng.choice((1, 3)), side, side]
        elif shape == "series":
            data["input_shape"] = [_log_int(rng, 8, 200), _log_int(rng, 1, 64)]
        else:
            data["input_shape"] = [_log_int(rng, 8, 256)]
            data["vocab_size"] = _log_int(rng, 50, 20_000)
        # "sequence" generation of vectors and images is drawn rarely: it has no steps to run over, which
        # the spec check now refuses (this generator found it as a crash, a ValueError from recommend())
        kinds = (
            ("random", "controlled", "sequence")
            if shape in ("series", "tokens")
            else ("random", "controlled")
        )
        spec["generation"] = rng.choice(kinds) if rng.random() < 0.9 else "sequence"
    return spec


def step_flops(candidate: dict[str, Any], batch: int) -> float:
    return float(candidate["flops_per_example"]) * batch * STEP_PASSES.get(str(candidate["family"]), 1.0)


def capped_batch(candidate: dict[str, Any], batch: int) -> int | None:
    """`batch` halved until a step is under the caps; None where even MIN_BATCH is over them."""
    if int(candidate["parameters"]) > MAX_PARAMETERS:
        return None
    while batch > MIN_BATCH and step_flops(candidate, batch) > MAX_STEP_FLOPS:
        batch //= 2
    return batch if step_flops(candidate, batch) <= MAX_STEP_FLOPS else None


@dataclass
class Drawn:
    """What a seed gave: the configurations, and the specs the engine failed on (not a SpecError: a bug)."""

    configurations: list[Configuration]
    crashes: list[dict[str, Any]]


def configurations(seed: int, count: int, *, max_per_spec: int = 3) -> Drawn:
    """`count` distinct (network, batch) configurations from specs drawn with `seed`: each spec's first
    candidate and, each with even odds, the next ones (up to `max_per_spec`), at the candidate's own batch
    or (even odds) a power of two from 8 to 512, capped (capped_batch)."""
    rng = random.Random(seed)
    found: list[Configuration] = []
    crashes: list[dict[str, Any]] = []
    seen: set[str] = set()
    number = 0
    while len(found) < count:
        spec = random_spec(rng)
        try:
            candidates = recommend(spec)["candidates"]
        except SpecError:
            continue
        except ValueError as exc:  # a valid spec the engine cannot answer: reported, not measured
            crashes.append({"spec": spec, "error": f"{type(exc).__name__}: {exc}"})
            continue
        number += 1
        for index, candidate in enumerate(candidates[:max_per_spec]):
            if index > 0 and rng.random() < 0.5:
                continue
            own = int(candidate["training"]["batch_size"])
            batch = capped_batch(candidate, own if rng.random() < 0.5 else 2 ** rng.randint(3, 9))
            key = json.dumps([candidate["networks"], batch], sort_keys=True)
            if batch is None or key in seen:
                continue
            seen.add(key)
            name = f"{number}-{index}-{candidate['family']}"
            found.append(Configuration(name, spec, index, candidate, batch))
            if len(found) == count:
                break
    return Drawn(found, crashes)


__all__ = [
    "BUILD_SEED",
    "EVALUATION_SEED",
    "EVALUATION_SEEDS",
    "Configuration",
    "Drawn",
    "configurations",
    "random_spec",
]
