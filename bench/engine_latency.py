"""`python -m bench engine [--repeat N] [--json PATH] [--profile PATH]`: recommend() latency, varied specs.

Each spec is answered `repeat` times after one warm-up call; the report gives the median, 90th percentile and
maximum per spec kind and over all calls (target: median under 1 ms; with a device profile, under 2 ms).
`--profile` reads a device profile (a `profile_device` JSON, or a `bench predict` result.json's "profile") and
times every CPU plan from it (issue 12). No torch is imported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from advisor.engine import recommend

CPU = {"cpu_cores": 4, "ram_gb": 16}
GPU = {"cpu_cores": 8, "ram_gb": 64, "gpu": "a100-80gb"}


def _spec(task: str, shape: list[int], hardware: dict[str, Any], **data: Any) -> dict[str, Any]:
    top: dict[str, Any] = {"task": task, "hardware": hardware}
    for key in ("generation", "goal", "target"):
        if key in data:
            top[key] = data.pop(key)
    top["data"] = {"examples": data.pop("examples", 50_000), "input_shape": shape, **data}
    return top


def specs() -> list[tuple[str, dict[str, Any]]]:
    """A varied set: every task, small and large inputs, CPU, one GPU and GPU farms with budgets."""
    farm = {**GPU, "gpus_per_node": 8, "nodes": 4}
    return [
        ("tabular", _spec("tabular", [20], CPU, outputs=3)),
        ("tabular", _spec("tabular", [300], GPU, outputs=2, target={"accuracy": 0.95})),
        ("tabular", _spec("tabular", [64], CPU, goal="compress")),
        ("tabular", _spec("tabular", [40], CPU, outputs=4, labelled_fraction=0.2)),
        ("tabular", _spec("tabular", [1_000_000], GPU, outputs=10)),
        ("vision", _spec("vision", [1, 28, 28], CPU, outputs=10, examples=60_000)),
        ("vision", _spec("vision", [3, 32, 32], GPU, outputs=10, target={"accuracy": 0.9})),
        ("vision", _spec("vision", [1, 512, 512], GPU, outputs=2, labelled_fraction=0.1)),
        (
            "vision",
            _spec(
                "vision",
                [3, 224, 224],
                farm,
                outputs=1000,
                examples=1_281_167,
                target={"accuracy": 0.75, "time_budget_hours": 6},
            ),
        ),
        ("vision", _spec("vision", [3, 224, 224], CPU, outputs=1000, examples=1_281_167)),
        ("sequence", _spec("sequence", [32], CPU, vocab_size=10_000, outputs=5)),
        ("sequence", _spec("sequence", [100, 12], GPU, outputs=3, goal="classify")),
        ("sequence", _spec("sequence", [50, 6], CPU, outputs=1, goal="regress")),
        ("generation", _spec("generation", [3, 64, 64], GPU)),
        ("generation", _spec("generation", [1, 28, 28], CPU, generation="controlled")),
        ("generation", _spec("generation", [64], CPU, vocab_size=10_000)),
        ("generation", _spec("generation", [30, 4], CPU)),
        ("generation", _spec("generation", [16], farm, target={"time_budget_hours": 0.1})),
    ]


def _summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "calls": len(ordered),
        "median_ms": 1e3 * statistics.median(ordered),
        "p90_ms": 1e3 * ordered[int(0.9 * (len(ordered) - 1))],
        "max_ms": 1e3 * ordered[-1],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench engine", description=__doc__)
    parser.add_argument("--repeat", type=int, default=200, help="calls per spec (default 200)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--profile", help="a device profile JSON (or a bench predict result.json)")
    args = parser.parse_args(argv)
    options: dict[str, Any] = {}
    if args.profile:
        with open(args.profile, encoding="utf-8") as handle:
            loaded = json.load(handle)
        options = {"profile": loaded.get("profile", loaded), "device": "bench-cpu0"}
    by_kind: dict[str, list[float]] = {}
    per_spec: list[dict[str, Any]] = []
    for kind, spec in specs():
        recommend(spec, **options)  # warm-up: catalogs load once per process
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            recommend(spec, **options)
            times.append(time.perf_counter() - start)
        by_kind.setdefault(kind, []).extend(times)
        shape = "x".join(map(str, spec["data"]["input_shape"]))
        per_spec.append({"kind": kind, "shape": shape, **_summary(times)})
    every = [t for times in by_kind.values() for t in times]
    overall = _summary(every)
    print(f"recommend() latency, {len(per_spec)} specs x {args.repeat} calls")
    print(f"{'spec':<28}{'median ms':>10}{'p90 ms':>10}{'max ms':>10}")
    for row in per_spec:
        label = f"{row['kind']} {row['shape']}"
        print(f"{label:<28}{row['median_ms']:>10.3f}{row['p90_ms']:>10.3f}{row['max_ms']:>10.3f}")
    for kind, times in by_kind.items():
        s = _summary(times)
        print(f"{'all ' + kind:<28}{s['median_ms']:>10.3f}{s['p90_ms']:>10.3f}{s['max_ms']:>10.3f}")
    print(f"{'ALL':<28}{overall['median_ms']:>10.3f}{overall['p90_ms']:>10.3f}{overall['max_ms']:>10.3f}")
    limit = 2.0 if options else 1.0
    print(f"target: median under {limit:g} ms -> {'met' if overall['median_ms'] < limit else 'MISSED'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"overall": overall, "specs": per_spec}, handle, indent=2)
    return 0
