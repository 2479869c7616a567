"""The grid `python -m bench predict` measures: the engine's own candidates for SPECS, two per family. Its own
module so that bench.predict (measuring) and bench.predict_runs (re-analysing saved runs) share it without
importing each other."""

from __future__ import annotations

import json
from typing import Any

from advisor.engine import families

SPECS: list[dict[str, Any]] = [
    {"task": "tabular", "data": {"examples": 50_000, "input_shape": [20], "outputs": 3}},
    {"task": "tabular", "data": {"examples": 50_000, "input_shape": [300], "outputs": 10}},
    {"task": "tabular", "data": {"examples": 5_000, "input_shape": [300]}, "goal": "compress"},
    {"task": "tabular", "data": {"examples": 5_000, "input_shape": [7]}, "goal": "compress"},
    {"task": "tabular", "data": {"examples": 50, "input_shape": [7]}, "goal": "compress"},
    {"task": "tabular", "data": {"examples": 50, "input_shape": [300]}, "goal": "compress"},
    {
        "task": "tabular",
        "data": {"examples": 10_000, "input_shape": [40], "outputs": 4, "labelled_fraction": 0.2},
    },
    {
        "task": "tabular",
        "data": {"examples": 10_000, "input_shape": [300], "outputs": 4, "labelled_fraction": 0.2},
    },
    {"task": "vision", "data": {"examples": 10_000, "input_shape": [1, 28, 28], "outputs": 10}},
    {"task": "vision", "data": {"examples": 10_000, "input_shape": [1, 8, 8], "outputs": 10}},
    {"task": "vision", "data": {"examples": 10_000, "input_shape": [3, 32, 32], "outputs": 10}},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [20]}, "generation": "random"},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [20]}, "generation": "controlled"},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [1, 28, 28]}, "generation": "random"},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [16, 4]}, "generation": "controlled"},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [3, 5, 7]}, "generation": "random"},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [1, 8, 8]}, "generation": "random"},
    {"task": "sequence", "data": {"examples": 10_000, "input_shape": [50, 12], "outputs": 5}},
    {"task": "sequence", "data": {"examples": 10_000, "input_shape": [32], "outputs": 5, "vocab_size": 1000}},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [200, 1]}},
    {"task": "generation", "data": {"examples": 10_000, "input_shape": [50, 12]}},
]
MAX_FLOPS_PER_BATCH = 3e9  # forward FLOPs x batch: keeps a step under ~0.3 s here
FAMILIES = families.KEYS


def grid_networks(per_family: int) -> list[tuple[str, dict[str, Any]]]:
    """Up to `per_family` distinct candidates of each family from the engine's answers to SPECS: the smallest
    and the largest under the FLOPs cap, so each family is seen at two sizes."""
    from advisor.engine import recommend

    by_family: dict[str, dict[str, dict[str, Any]]] = {f: {} for f in FAMILIES}
    for spec in SPECS:
        spec = {**spec, "hardware": {"cpu_cores": 2, "ram_gb": 16}}
        for c in recommend(spec)["candidates"]:
            key = json.dumps(c["networks"], sort_keys=True)
            if c["flops_per_example"] * 64 <= MAX_FLOPS_PER_BATCH and c["family"] in by_family:
                by_family[c["family"]].setdefault(key, c)
    chosen: list[tuple[str, dict[str, Any]]] = []
    for family, found in by_family.items():
        ranked = sorted(found.values(), key=lambda c: (c["flops_per_example"], c["parameters"]))
        picks = [ranked[0], ranked[-1]] if len(ranked) > 1 else ranked
        for i, c in enumerate(picks[:per_family]):
            chosen.append((f"{family}-{'small' if i == 0 else 'large'}", c))
    return chosen


__all__ = ["FAMILIES", "MAX_FLOPS_PER_BATCH", "SPECS", "grid_networks"]
