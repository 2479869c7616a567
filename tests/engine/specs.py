"""Spec tables shared by the engine's tests: a broad grid that reaches every family and branch."""

from __future__ import annotations

import itertools
from typing import Any

from advisor.engine import recommend

CPU = {"cpu_cores": 4, "ram_gb": 32}
GPU = {"cpu_cores": 8, "ram_gb": 64, "gpu": "gtx-1080"}


def spec(task: str, shape: list[int], **extra: Any) -> dict[str, Any]:
    """A TaskSpec; `extra` keys go to data unless they are top-level or hardware/target."""
    data: dict[str, Any] = {"examples": extra.pop("examples", 10_000), "input_shape": shape}
    top: dict[str, Any] = {"task": task, "hardware": extra.pop("hardware", CPU)}
    for key in ("generation", "goal", "target"):
        if key in extra:
            top[key] = extra.pop(key)
    data.update(extra)
    top["data"] = data
    return top


# a spec per kind of step: each reaches at least one family first
FAMILY_SPECS = {
    "ffn": spec("tabular", [20], outputs=3),
    "cnn": spec("vision", [1, 28, 28], outputs=10),
    "lstm": spec("sequence", [50, 12], outputs=5),
    "gan": spec("generation", [1, 28, 28], generation="random"),
    "vae": spec("generation", [20], generation="controlled"),
    "dbn": spec("tabular", [40], outputs=4, labelled_fraction=0.2),
}


def first_of_each_family() -> dict[str, dict[str, Any]]:
    """Every family the specs reach, with a candidate each (the first one the engine proposes)."""
    found: dict[str, dict[str, Any]] = {}
    for s in FAMILY_SPECS.values():
        for c in recommend(s)["candidates"]:
            found.setdefault(c["family"], c)
    return found


def out_of_ram(storage: str) -> dict[str, Any]:
    """50 million tabular rows on a 16 GB CPU host: the data cannot fit in RAM, so `storage` sets the pace."""
    return spec(
        "tabular", [1000], outputs=2, examples=50_000_000, hardware={**CPU, "ram_gb": 16, "storage": storage}
    )


def grid() -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []
    targets = [None, {"accuracy": 0.9}, {"accuracy": 0.99}]
    for features, goal, examples, target in itertools.product(
        [2, 7, 300], ["classify", "regress", "compress"], [50, 5_000, 500_000], targets
    ):
        extra: dict[str, Any] = {"goal": goal, "examples": examples}
        if goal != "compress":
            extra["outputs"] = 3 if goal == "classify" else 1
        if target is not None:
            extra["target"] = target
        specs.append(spec("tabular", [features], **extra))
    specs.append(spec("tabular", [40], outputs=4, labelled_fraction=0.2))
    for shape in ([1, 28, 28], [3, 32, 32], [1, 8, 8], [3, 5, 7], [4, 64, 48], [3, 100, 75], [1, 512, 512]):
        for fraction, target in ((1.0, None), (0.1, {"accuracy": 0.95})):
            specs.append(spec("vision", shape, outputs=10, labelled_fraction=fraction, target=target))
        specs.append(spec("vision", shape, goal="regress", outputs=2))
        specs.append(spec("vision", shape, goal="compress"))
        for kind in ("random", "controlled"):
            specs.append(spec("generation", shape, generation=kind))
    for outputs, accuracy in ((1000, None), (1000, 0.6), (1000, 0.7), (200, 0.75), (10, None)):
        specs.append(
            spec("vision", [3, 224, 224], outputs=outputs, examples=1_281_167, target={"accuracy": accuracy})
        )
    for shape, vocab in (([32], 1_000), ([64], 20_000), ([50, 12], None), ([1, 3], None), ([200, 1], None)):
        specs.append(spec("sequence", shape, outputs=5, vocab_size=vocab))
        specs.append(spec("generation", shape, vocab_size=vocab))
    specs.append(spec("sequence", [20, 6], goal="regress", outputs=2))
    specs.append(spec("sequence", [20, 6], goal="compress"))
    for shape in ([20], [16, 4]):
        for kind in ("random", "controlled"):
            specs.append(spec("generation", shape, generation=kind))
    return specs
