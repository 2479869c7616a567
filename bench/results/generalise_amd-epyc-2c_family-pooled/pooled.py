"""Each family's error over every saved quiet generalise run, scored by today's cost model, and how often a
family's median falls outside ±15% by chance when an evaluation draws only a few of its networks.

`python bench/results/generalise_amd-epyc-2c_family-pooled/pooled.py [--draws 4,8,16] [--runs GLOB]`
(from the repository root; nothing is measured: the saved runs are scored again)."""

from __future__ import annotations

import argparse
import glob
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench.generalise import score  # after the path above

TOLERANCE = 0.15  # the evaluation's target: no family's median outside ±15%
RESAMPLES = 2000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", default="4,8,16", help="networks an evaluation draws of one family")
    parser.add_argument("--runs", default="bench/results/generalise_*/**/run.json")
    args = parser.parse_args()
    draws = [int(d) for d in args.draws.split(",")]
    # family -> network -> its quiet rows' errors (both thread counts); a loaded run's rows are not quiet
    families: dict[str, dict[str, list[float]]] = {}
    runs = [p for p in sorted(glob.glob(args.runs, recursive=True)) if "loaded" not in p]
    for path in runs:
        for row in score(json.loads(Path(path).read_text(encoding="utf-8")))["rows"]:
            if row["quiet"]:
                nets = families.setdefault(row["family"], {})
                nets.setdefault(f"{path}:{row['name']}", []).append(row["error"])
    rng = random.Random(0)
    print(f"{len(runs)} runs")
    print(
        "| family | rows | networks | median | within ±25% | "
        + " | ".join(f"outside ±15%, {d} networks" for d in draws)
        + " |"
    )
    print("|---|---|---|---|---|" + "---|" * len(draws))
    for family, nets in sorted(families.items()):
        errors = [e for v in nets.values() for e in v]
        chances = []
        for d in draws:
            # an evaluation's family median: d networks drawn, each with its rows
            outside = 0
            for _ in range(RESAMPLES):
                drawn = [e for k in rng.choices(list(nets), k=d) for e in nets[k]]
                outside += abs(statistics.median(drawn)) > TOLERANCE
            chances.append(f"{outside / RESAMPLES:.0%}")
        within = sum(abs(e) <= 0.25 for e in errors) / len(errors)
        print(
            f"| {family} | {len(errors)} | {len(nets)} | {statistics.median(errors):+.1%} | {within:.0%} | "
            + " | ".join(chances)
            + " |"
        )


if __name__ == "__main__":
    main()
