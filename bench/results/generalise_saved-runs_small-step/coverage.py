"""The stated 90% intervals (the merged profile's members' span with its floor, engine.intervals) on every
saved run of profile version 11, engine 7 against engine 8: each run's coverage of its quiet rows and the
median width, then how many runs fall within 85-95%. Nothing is measured.

`python bench/results/generalise_saved-runs_small-step/coverage.py` (from the repository root)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rescore  # this folder's (the two cost models), after the paths above

from advisor.engine import costmodel
from bench.generalise import _scores, score

WAYS = {"engine 7": rescore._without_small, "engine 8": rescore.TODAY}


def main() -> None:
    inside = dict.fromkeys(WAYS, 0)
    runs = 0
    print("| run | " + " | ".join(f"{w}: covered, width" for w in WAYS) + " |")
    print("|---|" + "---|" * len(WAYS))
    for path in sorted(rescore.RESULTS.glob("generalise_*/run.json")):
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved["profiles"][0].get("version") != 11:
            continue
        runs += 1
        cells = []
        for way, factors in WAYS.items():
            costmodel.with_factors = factors
            rows = [r for r in score(saved)["rows"] if r["quiet"]]
            iv = _scores(rows, len(saved["profiles"]))["intervals"]
            inside[way] += 0.85 <= iv["stated_covered"] <= 0.95
            cells.append(f"{iv['stated_covered']:.0%}, {iv['stated_width']:.2f}")
        print(f"| {path.parent.name} | " + " | ".join(cells) + " |")
    costmodel.with_factors = rescore.TODAY
    print("| runs within 85-95% | " + " | ".join(f"{inside[w]} of {runs}" for w in WAYS) + " |")


if __name__ == "__main__":
    main()
