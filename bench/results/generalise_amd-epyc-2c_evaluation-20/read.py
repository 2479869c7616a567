"""Seed 24023's quiet rows read two ways, nothing measured: scored as run (the cells' gate work, engine
version 7) and with FLOPs alone (the cost model before it); then how far each round of measurements and
each profile sat from the rows' medians, by thread count (the host's speed over the run); last, by thread
count, the estimate's share within ±25% beside the floor's (each measurement against the others' median).

`python bench/results/generalise_amd-epyc-2c_evaluation-20/read.py [RUN.json]` (from the repository root;
default: this folder's run; `../generalise_amd-epyc-2c_evaluation-21-loaded/run.json` reads the same)."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine import layercost  # after the path above
from bench.generalise import _floor, score

RUN = Path(__file__).resolve().parent / "run.json"


def _line(what: str, errors: list[float]) -> str:
    inside = sum(abs(e) <= 0.25 for e in errors) / len(errors)
    middle = statistics.median(abs(e) for e in errors)
    return f"| {what} | {len(errors)} | {inside:.0%} | {middle:.1%} | {statistics.median(errors):+.1%} |"


def main() -> None:
    saved = json.loads((Path(sys.argv[1]) if len(sys.argv) > 1 else RUN).read_text(encoding="utf-8"))
    keyed = layercost._gate_keyed
    print("| cost model, rows | n | within ±25% | median \\|error\\| | signed median |")
    print("|---|---|---|---|---|")
    as_run: list[dict[str, Any]] = []
    for name, gate_keyed in (("as run (gate work)", keyed), ("FLOPs alone (before)", lambda c, g: None)):
        layercost._gate_keyed = gate_keyed
        rows = [r for r in score(saved)["rows"] if r["quiet"]]
        as_run = as_run or rows
        print(_line(f"{name}, all", [r["error"] for r in rows]))
        for family in ("lstm", "gru"):
            print(_line(f"{name}, {family}", [r["error"] for r in rows if r["family"] == family]))
    layercost._gate_keyed = keyed
    drift = [
        "| threads | estimate / each round's measurement - 1 | each profile's estimate / the median - 1 |"
    ]
    floors = ["| threads | rows | estimate within ±25% | floor within ±25% |"]
    drift.append("|---|---|---|")
    floors.append("|---|---|---|---|")
    for threads in (1, 2):
        mine = [r for r in as_run if r["threads"] == threads]
        if not mine:
            continue
        rounds = [
            statistics.median(r["estimate"] / r["measured"][k] - 1 for r in mine)
            for k in range(len(mine[0]["measured"]))
        ]
        members = [
            statistics.median(r["each"][p] / r["median"] - 1 for r in mine)
            for p in range(len(mine[0]["each"]))
        ]
        cells = (", ".join(f"{e:+.1%}" for e in values) for values in (rounds, members))
        drift.append(f"| {threads} | {' | '.join(cells)} |")
        floor = _floor(mine)  # the bench's own: each measurement predicted by its others' median
        inside = [sum(abs(e) <= 0.25 for e in es) / len(es) for es in ([r["error"] for r in mine], floor)]
        floors.append(f"| {threads} | {len(mine)} | {inside[0]:.0%} | {inside[1]:.0%} |")
    for table in (drift, floors):
        print()
        print("\n".join(table))


if __name__ == "__main__":
    main()
