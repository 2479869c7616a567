"""A floor under the merged profile's span interval, fitted on every saved generalise run (README.md).

Each saved `bench generalise` run of three or five profiles is scored again by today's model
(generalise.score gives each quiet row its estimate, its members' estimates and its measured median). The
interval is [min(x0.90 of the lowest, a x the estimate), max(x1.30 of the highest, b x the estimate)]; (a, b)
is chosen on a grid for the most runs within 85-95% covered (then the pooled share nearest 90%, then the
narrowest), on all runs, and again for each run on the others (left out in turn). Run from the repository
root (about 15 s):

    PYTHONPATH=. python bench/results/generalise_saved-runs_interval-floor/floor.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from bench.generalise import score

Row = dict[str, Any]
SPAN = (0.90, 1.30)  # engine.intervals.SPAN_RATIOS["cpu"]
GRID = [(round(0.80 + 0.01 * i, 2), round(1.30 + 0.02 * j, 2)) for i in range(11) for j in range(21)]


def rows_by_run() -> dict[str, list[Row]]:
    found = {}
    for path in sorted(Path("bench/results").glob("generalise_*/run.json")):
        saved = json.loads(path.read_text())
        if len(saved.get("profiles", [])) >= 3:
            quiet = [r for r in score(saved)["rows"] if r["quiet"] and r.get("members")]
            if quiet:
                found[path.parent.name.removeprefix("generalise_")] = quiet
    return found


def cover(rows: list[Row], floor: tuple[float, float]) -> tuple[float, float]:
    """The share of rows whose measured median falls inside, and the median width (upper / lower)."""
    inside, widths = [], []
    for r in rows:
        low = min(SPAN[0] * min(r["estimate"], *r["members"]), floor[0] * r["estimate"])
        high = max(SPAN[1] * max(r["estimate"], *r["members"]), floor[1] * r["estimate"])
        inside.append(low <= r["median"] <= high)
        widths.append(high / low)
    return sum(inside) / len(inside), statistics.median(widths)


def best(runs: dict[str, list[Row]], names: list[str]) -> tuple[float, float]:
    pooled = [r for name in names for r in runs[name]]

    def key(floor: tuple[float, float]) -> tuple[int, float, float]:
        shares = [cover(runs[name], floor)[0] for name in names]
        share, width = cover(pooled, floor)
        return sum(0.85 <= s <= 0.95 for s in shares), -abs(share - 0.90), -width

    return max(GRID, key=key)


def main() -> None:
    runs = rows_by_run()
    names = list(runs)
    pooled = [r for rows in runs.values() for r in rows]
    floor = best(runs, names)
    for label, f in (("span alone", (9.0, 0.0)), (f"floor x{floor[0]:.2f}-x{floor[1]:.2f}", floor)):
        share, width = cover(pooled, f)
        print(
            f"{label}, all {len(pooled)} rows of {len(runs)} runs: {share:.1%} covered, "
            f"median width {width:.2f}"
        )
    print("| run | quiet rows | span alone covers (width) | floor fitted without the run | covers (width) |")
    print("|---|---:|---:|---|---:|")
    inside = before = 0
    for name in names:
        f = best(runs, [n for n in names if n != name])
        alone, alone_width = cover(runs[name], (9.0, 0.0))
        share, width = cover(runs[name], f)
        inside, before = inside + (0.85 <= share <= 0.95), before + (0.85 <= alone <= 0.95)
        print(
            f"| {name} | {len(runs[name])} | {alone:.0%} ({alone_width:.2f}) | x{f[0]:.2f}-x{f[1]:.2f} | "
            f"{share:.0%} ({width:.2f}) |"
        )
    print(
        f"runs within 85-95%: {inside} of {len(names)} with the floor left out, {before} with the span alone"
    )


if __name__ == "__main__":
    main()
