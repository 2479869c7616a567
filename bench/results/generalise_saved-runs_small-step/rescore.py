"""Every saved generalise run of profile version 11 re-scored several ways, nothing measured: without the
small step's factor (engine version 7), with it (version 8, wholesteps.SMALL_STEP_SPAN), with its whole
excess instead of half, and at other spans; each run's quiet rows within ±25% and median |error|, then all
rows pooled.

`python bench/results/generalise_saved-runs_small-step/rescore.py [RUN.json ...]` (from the repository root;
default: every saved run, which `rescore.txt` shows as it stood before seed 24027's run was added)."""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine import costmodel  # after the path above
from bench.generalise import score

RESULTS = Path(__file__).resolve().parents[1]
SMALL = ("small_step_factor", "small_step_modelled")


def _without_small(rates: Any) -> Any:
    found = TODAY(rates)
    for key in SMALL:
        found.pop(key, None)
    return found


def _whole_ratio(rates: Any) -> Any:
    """The small MLP's whole excess instead of half of it: factor_of takes the square root of its ratio."""
    found = TODAY(rates)
    if "small_step_factor" in found:
        found["small_step_factor"] = found["small_step_factor"] ** 2 / found["step_factor"]
    return found


TODAY: Callable[[Any], Any] = costmodel.with_factors
SPAN = costmodel.SMALL_STEP_SPAN
WAYS: dict[str, tuple[Callable[[Any], Any], float]] = {
    "version 7 (none)": (_without_small, SPAN),
    f"version 8 (span {SPAN:g})": (TODAY, SPAN),
    "whole ratio (span 3)": (_whole_ratio, SPAN),
    "span 2": (TODAY, 2.0),
    "span 5": (TODAY, 5.0),
}


def _cell(errors: list[float], digits: int = 0) -> str:
    inside = sum(abs(e) <= 0.25 for e in errors) / len(errors)
    return f"{inside:.{digits}%} ({statistics.median(abs(e) for e in errors):.1%})"


def main() -> None:
    runs = []
    paths = [Path(a) for a in sys.argv[1:]] or sorted(RESULTS.glob("generalise_*/run.json"))
    for path in paths:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved["profiles"][0].get("version") == 11:
            runs.append((path.parent.name, saved))
    pooled: dict[str, list[float]] = {way: [] for way in WAYS}
    print("| run | quiet rows | " + " | ".join(WAYS) + " |")
    print("|---|---:|" + "---|" * len(WAYS))
    for name, saved in runs:
        cells, count = [], 0
        for way, (factors, span) in WAYS.items():
            costmodel.with_factors, costmodel.SMALL_STEP_SPAN = factors, span
            errors = [r["error"] for r in score(saved)["rows"] if r["quiet"]]
            pooled[way] += errors
            cells.append(_cell(errors))
            count = len(errors)
        print(f"| {name} | {count} | " + " | ".join(cells) + " |")
    costmodel.with_factors, costmodel.SMALL_STEP_SPAN = TODAY, SPAN
    print(
        f"| all {len(runs)} runs | {len(pooled[next(iter(WAYS))])} | "
        + " | ".join(_cell(e, 1) for e in pooled.values())
        + " |"
    )


if __name__ == "__main__":
    main()
