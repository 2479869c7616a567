"""The runs of this folder side by side: the ETA within ±25% from 25% of each job on, the 90% range's
coverage, and what the re-measure cost (README.md).

Rerun: python bench/results/queue_intel-xeon-2c_in-child-remeasure/compare.py [CODE=FOLDER ...]
(default: this folder's before/ and runs/; each FOLDER's *.json are `bench queue --forecast` runs)
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine.remaining import ETA_RATIOS
from bench.queue_forecast import score

HERE = Path(__file__).resolve().parent


def _covered(job: dict[str, Any]) -> tuple[int, int]:
    """ETA samples from 25% of the job on whose actual remaining time fell inside the stated 90% range."""
    inside = total = 0
    for e in job["eta"]:
        if e["elapsed_share"] < 0.25 or e["actual"] <= 0 or e["basis"] not in ETA_RATIOS:
            continue
        low, high = ETA_RATIOS[e["basis"]]
        total += 1
        inside += e["predicted"] * low <= e["actual"] <= e["predicted"] * high
    return inside, total


def summary(run: dict[str, Any]) -> dict[str, Any]:
    eta = score(run)["eta_from_25pct_of_run"]
    jobs = [j for j in run["jobs"] if j["duration"]]
    again = [j for j in jobs if any(len(m) > 3 and m[3] for m in j["marks"])]
    once = [j for j in jobs if j not in again]
    covered = [_covered(j) for j in jobs]
    # from the re-measure's announcement to the job's end
    tails = [j["duration"] - next(m[0] for m in j["marks"] if len(m) > 3 and m[3]) for j in again]
    return {
        "within": eta["within"],
        "n": eta["n"],
        "remeasured": len(again),
        "jobs": len(jobs),
        "remeasured_s": statistics.median(j["duration"] for j in again) if again else None,
        "others_s": statistics.median(j["duration"] for j in once) if once else None,
        "start_s": statistics.median(j["marks"][0][0] for j in jobs if j["marks"]),
        "covered": sum(c for c, _ in covered),
        "covered_n": sum(n for _, n in covered),
        "tails": tails,
    }


def main(argv: list[str]) -> None:
    folders = [(a.split("=", 1)[0], Path(a.split("=", 1)[1])) for a in argv] or [
        ("before", HERE / "before"),
        ("after", HERE / "runs"),
    ]
    print(
        "| code | run | ETA within ±25% | 90% range held | re-measured | median job, re-measured / not "
        "| first step at |"
    )
    print("|---|---|---:|---:|---:|---|---:|")
    totals: dict[str, list[int]] = {}
    tails: dict[str, list[float]] = {}
    for code, folder in folders:
        for path in sorted(folder.glob("*.json")):
            s = summary(json.loads(path.read_text()))
            tails.setdefault(code, []).extend(s["tails"])
            t = totals.setdefault(code, [0, 0, 0, 0])
            t[0], t[1], t[2], t[3] = (
                t[0] + s["within"],
                t[1] + s["n"],
                t[2] + s["covered"],
                t[3] + s["covered_n"],
            )
            again = "—" if s["remeasured_s"] is None else f"{s['remeasured_s']:.1f}"
            print(
                f"| {code} | {path.stem} | {s['within']}/{s['n']} ({s['within'] / s['n']:.0%}) | "
                f"{s['covered'] / s['covered_n']:.0%} | {s['remeasured']}/{s['jobs']} | "
                f"{again} / {s['others_s']:.1f} s | {s['start_s']:.1f} s |"
            )
    for code, (w, n, c, cn) in totals.items():
        print(f"| {code} | all | {w}/{n} ({w / n:.0%}) | {c / cn:.0%} | | | |")
    for code, t in tails.items():
        print(
            f"\n{code}: a re-measure's announcement to its job's end, median {statistics.median(t):.2f} s "
            f"({min(t):.2f}-{max(t):.2f}, {len(t)} jobs)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
