"""A sweep rule tried on saved runs, not adopted: a doubling whose gain rests only on unreliable
measurements counts towards the plateau (today every measured rate counts). Each saved job's first child's
measured configurations, in the order they ran, are cut where that rule would have stopped the sweep;
nothing is measured. Reports, over all runs and over the quiet ones, the jobs it changes, the seconds their
configurations past the cut took, and the jobs whose fastest reliable configuration lies past the cut.

`python bench/results/queue_amd-epyc-2c_recheck/sweep_rule.py` (from the repository root)."""

from __future__ import annotations

import glob
import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine.sweepplan import PLATEAU_DOUBLINGS, PLATEAU_GAIN, after_batch

Row = tuple[int, int, float, bool]  # batch, threads, seconds per batch, unreliable
Rule = Callable[[dict[int, float], float, int, frozenset[int]], tuple[list[int], float, int]]


def reliable_gains(
    rates: dict[int, float], best: float, flat: int, keep: frozenset[int] = frozenset()
) -> tuple[list[int], float, int]:
    """after_batch, but only a reliable rate (not in `keep`) can show a gain or raise the best; which thread
    counts stay is after_batch's own."""
    active, _, _ = after_batch(rates, best, flat, keep)
    sure = [r for t, r in rates.items() if t not in keep]
    gained = bool(sure) and max(sure) >= best * PLATEAU_GAIN
    return active, max(best, max(sure, default=0.0)), 0 if gained else flat + 1


def measured_by(rows: list[Row], rule: Rule) -> int:
    """How many of `rows` the sweep measures before `rule` finds a plateau."""
    sizes: list[tuple[int, list[Row]]] = []
    for row in rows:
        if not sizes or sizes[-1][0] != row[0]:
            sizes.append((row[0], []))
        sizes[-1][1].append(row)
    best, flat, count = 0.0, 0, 0
    for batch, group in sizes:
        count += len(group)
        rates = {t: batch / s for _, t, s, _ in group}
        _, best, flat = rule(rates, best, flat, frozenset(t for _, t, _, u in group if u))
        if flat >= PLATEAU_DOUBLINGS:
            break
    return count


def _per_example(rows: list[Row]) -> float:
    reliable = [r[2] / r[0] for r in rows if not r[3]]
    return min(reliable) if reliable else float("inf")


def main() -> None:
    totals: dict[str, dict[str, Any]] = {}
    for path in sorted(glob.glob("bench/results/queue_*/runs/*.json")):
        for job in json.loads(Path(path).read_text(encoding="utf-8"))["jobs"]:
            measured, sweep = job.get("measured") or [], (job["planned"] or {}).get("sweep")
            if not measured or not job.get("duration") or not sweep or sweep["batch_sizes"]:
                continue
            first = measured[0][3]
            rows = [(int(r[0]), int(r[1] or 1), float(r[2]), len(r) > 4 and bool(r[4])) for r in measured]
            rows = [r for r, raw in zip(rows, measured, strict=True) if raw[3] == first and raw[2]]
            assert measured_by(rows, after_batch) == len(rows)  # today's rule stops where the job did
            cut = measured_by(rows, reliable_gains)
            marks = job["marks"]
            steps = [
                b[0] - a[0]
                for a, b in itertools.pairwise(marks)
                if b[1] - a[1] == 1 and not any(m[3:4] and m[3] for m in (a, b))
            ]
            for name in ("all", "quiet") if "quiet" in Path(path).name else ("all",):
                t = totals.setdefault(
                    name, {"jobs": 0, "seconds": 0.0, "changed": 0, "saved": 0.0, "lost": 0}
                )
                t["jobs"] += 1
                t["seconds"] += job["duration"]
                if cut < len(rows):
                    t["changed"] += 1
                    t["saved"] += sum(steps[cut : len(rows)])
                    t["lost"] += _per_example(rows) < _per_example(rows[:cut])
    for name, t in totals.items():
        print(
            f"{name} runs: {t['changed']} of {t['jobs']} jobs stop sooner, {t['saved']:.0f} of"
            f" {t['seconds']:.0f} s saved ({t['saved'] / t['seconds']:.1%});"
            f" fastest reliable configuration past the cut: {t['lost']}"
        )


if __name__ == "__main__":
    main()
