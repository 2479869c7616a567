"""Every saved quiet generalise row whose profiles are of version 11, scored again with the factor of networks
with a transposed convolution at several weights of the CNN's whole step (0: the wide MLP's factor alone, as
before; 0.5: the geometric mean, costmodel.factor_of), per run and per family on each host.

`python bench/results/generalise_saved-runs_decoder-factor/rescore.py [--weights 0,0.25,0.5,0.75,1]`
(from the repository root; nothing is measured). `--all-convolutions` gives every network with a 2-D
convolution the mixed factor, the variant not taken."""

from __future__ import annotations

import argparse
import glob
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine import costmodel  # after the path above
from advisor.engine.profile import at_threads
from bench.generalise import score

WITHIN = 0.25
CONVOLUTIONS = ("ConvTranspose2d", "Conv2d")


def _kinds(candidate: dict[str, Any]) -> set[str]:
    return {item["kind"] for layers in candidate["networks"].values() for item in layers}


def _factor_at(weight: float, kinds: tuple[str, ...]) -> Any:
    def factor_of(profile: Any, candidate: Any = None) -> float:
        fewest = at_threads(profile, 1)
        factor, image = fewest.get("step_factor", 1.0), fewest.get("decoder_step_factor")
        if image is None or candidate is None or not _kinds(candidate) & set(kinds):
            return factor
        return math.exp((1 - weight) * math.log(factor) + weight * math.log(image))

    return factor_of


def _rows(paths: list[str]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        by_name = {c["name"]: c for c in saved["configurations"]}
        host = Path(path).parts[2].split("_")[1]  # the folder names its host
        for row in score(saved)["rows"]:
            if row["quiet"]:
                kinds = _kinds(by_name[row["name"]]["candidate"])
                rows.append({**row, "run": Path(path).parts[2], "host": host, "kinds": kinds})
    return rows


def _within(errors: list[float]) -> str:
    return f"{sum(abs(e) <= WITHIN for e in errors) / len(errors):.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", default="0,0.25,0.5,0.75,1")
    parser.add_argument("--all-convolutions", action="store_true")
    args = parser.parse_args()
    paths = []
    for p in sorted(glob.glob("bench/results/generalise_*/**/run.json", recursive=True)):
        saved = json.loads(Path(p).read_text(encoding="utf-8"))
        if "loaded" not in p and saved["profiles"][0].get("version") == 11:
            paths.append(p)
    kinds = CONVOLUTIONS if args.all_convolutions else CONVOLUTIONS[:1]
    weights = [float(w) for w in args.weights.split(",")]
    scored = {}
    for w in weights:
        costmodel.factor_of = _factor_at(w, kinds)
        scored[w] = _rows(paths)
    first = scored[weights[0]]
    mixed = " or ".join(kinds)
    print(f"{len(paths)} runs, {len(first)} quiet rows; the mixed factor for networks with {mixed}\n")
    print("## Rows with a transposed convolution, per run: median error and share within ±25%\n")
    print("| run | rows | " + " | ".join(f"weight {w:g}" for w in weights) + " |")
    print("|---|---|" + "---|" * len(weights))
    runs = sorted({r["run"] for r in first})
    total: dict[float, list[float]] = defaultdict(list)
    for run in runs:
        cells, n = [], 0
        for w in weights:
            errors = [r["error"] for r in scored[w] if r["run"] == run and "ConvTranspose2d" in r["kinds"]]
            total[w] += errors
            n = len(errors)
            cells.append(f"{statistics.median(errors):+.1%}, {_within(errors)}" if errors else "-")
        if n:
            print(f"| {run} | {n} | " + " | ".join(cells) + " |")
    cells = [f"{statistics.median(total[w]):+.1%}, {_within(total[w])}" for w in weights]
    print(f"| all | {len(total[weights[0]])} | " + " | ".join(cells) + " |")
    print("\n## Every row, per host: share within ±25%, median |error|, and each family's median error\n")
    for host in sorted({r["host"] for r in first}):
        print(f"### {host}\n")
        families = sorted({r["family"] for r in first if r["host"] == host})
        print("| weight | rows | within ±25% | median \\|error\\| | " + " | ".join(families) + " |")
        print("|---|---|---|---|" + "---|" * len(families))
        for w in weights:
            rows = [r for r in scored[w] if r["host"] == host]
            errors = [r["error"] for r in rows]
            by_family = {f: statistics.median(r["error"] for r in rows if r["family"] == f) for f in families}
            print(
                f"| {w:g} | {len(rows)} | {_within(errors)} | {statistics.median(map(abs, errors)):.1%} | "
                + " | ".join(f"{by_family[f]:+.0%}" for f in families)
                + " |"
            )
        print()


if __name__ == "__main__":
    main()
