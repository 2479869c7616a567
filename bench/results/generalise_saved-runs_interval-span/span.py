"""Would an interval spanning a merged profile's members cover the saved generalise runs' quiet rows?

Every saved `bench generalise` run with three profiles is scored again by today's model (generalise.score,
which also gives each row its members' estimates); the span's factors are fitted on the AMD runs, and each
AMD run is scored with factors fitted on the others (left out in turn). Run from the repository root:

    PYTHONPATH=. python bench/results/generalise_saved-runs_interval-span/span.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from bench.generalise import score

Row = dict[str, Any]


def rows_by_run() -> dict[str, list[Row]]:
    found = {}
    for path in sorted(Path("bench/results").glob("generalise_*/run.json")):
        saved = json.loads(path.read_text())
        if len(saved.get("profiles", [])) == 3:
            quiet = [r for r in score(saved)["rows"] if r["quiet"]]
            if quiet:
                found[path.parent.name] = quiet
    return found


def bounds(r: Row) -> tuple[float, float]:
    return min(r["estimate"], *r["members"]), max(r["estimate"], *r["members"])


def fit(rows: list[Row]) -> tuple[float, float]:
    low = float(np.quantile([r["median"] / bounds(r)[0] for r in rows], 0.05))
    high = float(np.quantile([r["median"] / bounds(r)[1] for r in rows], 0.95))
    return low, high


def cover(rows: list[Row], low: float, high: float, span: bool) -> tuple[float, float]:
    inside, widths = [], []
    for r in rows:
        a, b = bounds(r) if span else (r["estimate"], r["estimate"])
        inside.append(low * a <= r["median"] <= high * b)
        widths.append(high * b / (low * a))
    return sum(inside) / len(inside), statistics.median(widths)


def main() -> None:
    runs = rows_by_run()
    amd = {k: v for k, v in runs.items() if "amd-epyc" in k}
    pooled = [r for v in amd.values() for r in v]
    low, high = fit(pooled)
    print(f"span factors on every AMD row ({len(pooled)}): x{low:.3f} to x{high:.3f}")
    print(f"pooled AMD coverage and median width: {cover(pooled, low, high, True)}")
    print("| run | quiet rows | band x0.74-x1.48 covers | span (fitted without the run) | covers | width |")
    print("|---|---:|---:|---|---:|---:|")
    for name, rows in runs.items():
        others = [r for k, v in amd.items() if k != name for r in v]
        lo, hi = fit(others)
        band, _ = cover(rows, 0.74, 1.48, False)
        spanned, width = cover(rows, lo, hi, True)
        print(f"| {name} | {len(rows)} | {band:.0%} | x{lo:.2f}-x{hi:.2f} | {spanned:.0%} | {width:.2f} |")


if __name__ == "__main__":
    main()
