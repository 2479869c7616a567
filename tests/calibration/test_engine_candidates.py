"""Every family advisor.engine.recommend() produces builds, trains one real step, matches the engine's counts.

Published networks (AlexNet, GoogLeNet, ResNet-50 at 224x224) are left out: a step takes seconds on this CPU.
They build with the same code (Residual, Concat) and their counts were checked by hand: see the report.
"""

from __future__ import annotations

from typing import Any

import pytest

from advisor.calibration import make_step
from advisor.engine import recommend

HARDWARE = {"cpu_cores": 2, "ram_gb": 16}
SPECS: dict[str, dict[str, Any]] = {
    "tabular-classify": {
        "task": "tabular",
        "goal": "classify",
        "data": {"examples": 5000, "input_shape": [20], "outputs": 3},
    },
    "tabular-regress": {
        "task": "tabular",
        "goal": "regress",
        "data": {"examples": 5000, "input_shape": [12], "outputs": 2},
    },
    "tabular-compress": {
        "task": "tabular",
        "goal": "compress",
        "data": {"examples": 5000, "input_shape": [30]},
    },
    "vision-few-labels": {
        "task": "vision",
        "goal": "classify",
        "data": {"examples": 60000, "input_shape": [1, 28, 28], "outputs": 10, "labelled_fraction": 0.05},
    },
    "vision-compress": {
        "task": "vision",
        "goal": "compress",
        "data": {"examples": 60000, "input_shape": [1, 28, 28]},
    },
    "sequence-tokens": {
        "task": "sequence",
        "goal": "classify",
        "data": {"examples": 20000, "input_shape": [40], "vocab_size": 5000, "outputs": 4},
    },
    "generation-random": {
        "task": "generation",
        "generation": "random",
        "data": {"examples": 60000, "input_shape": [1, 28, 28]},
    },
    "generation-controlled": {
        "task": "generation",
        "generation": "controlled",
        "data": {"examples": 60000, "input_shape": [1, 28, 28], "outputs": 10},
    },
    "generation-text": {
        "task": "generation",
        "generation": "sequence",
        "data": {"examples": 60000, "input_shape": [32], "vocab_size": 1000},
    },
    "generation-series": {
        "task": "generation",
        "generation": "sequence",
        "data": {"examples": 6000, "input_shape": [32, 2]},
    },
}


def _candidates() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name, spec in SPECS.items():
        for i, cand in enumerate(recommend({**spec, "hardware": HARDWARE})["candidates"]):
            if cand.get("published") is None:
                found.append((f"{name}-{i}-{cand['family']}", cand))
    return found


CANDIDATES = _candidates()


def test_it_covers_every_family_the_engine_produces() -> None:
    assert {c["family"] for _, c in CANDIDATES} == {
        "ffn",
        "ae",
        "rbm",
        "dbn",
        "cnn",
        "dn",
        "rnn",
        "lstm",
        "gru",
        "tcn",
        "gan",
        "vae",
    }


@pytest.mark.parametrize(("name", "candidate"), CANDIDATES, ids=[n for n, _ in CANDIDATES])
def test_it_trains_one_step_of_an_engine_candidate_with_the_engines_counts(
    name: str, candidate: dict[str, Any]
) -> None:
    step = make_step(candidate)
    step.run(step.make_batch(4))
    built = sum(p.numel() for net in step.nets.values() for p in net.parameters())
    assert built == candidate["parameters"]
    assert sum(step.forward_flops.values()) == pytest.approx(candidate["flops_per_example"], rel=0.01)
