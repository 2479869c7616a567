"""Every saved quiet generalise row whose profiles are of version 11, scored again with the gated cells'
(LSTM, GRU) work per gate value at several values of layercost.CELL_GATE_WORK ("before": FLOPs alone, the
cost model before it), per host: all rows, the recurrent ones, those by batch size and by what feeds them.

`python bench/results/generalise_saved-runs_cell-gates/rescore.py [--works before,0,32,64,96,128] [--runs]`
(from the repository root; nothing is measured)."""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine import layercost  # after the path above
from bench.generalise import score

WITHIN = 0.25
RECURRENT = ("lstm", "gru")
KEYED = layercost._gate_keyed


def _rows(paths: list[str]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        by_name = {c["name"]: c for c in saved["configurations"]}
        run = Path(path).parts[2]
        for row in score(saved)["rows"]:
            if row["quiet"]:
                networks = by_name[row["name"]]["candidate"]["networks"].values()
                kinds = {item["kind"] for layers in networks for item in layers}
                fed = "tokens" if "Embedding" in kinds else "features"
                rows.append({**row, "run": run, "host": run.split("_")[1], "fed": fed})
    return rows


def _summary(errors: list[float]) -> str:
    if not errors:
        return "| 0 | | | |"
    inside = sum(abs(e) <= WITHIN for e in errors) / len(errors)
    middle = statistics.median(abs(e) for e in errors)
    return f"| {len(errors)} | {statistics.median(errors):+.1%} | {middle:.1%} | {inside:.1%} |"


def _size(batch: int) -> str:
    return "<= 32" if batch <= 32 else "64-128" if batch <= 128 else ">= 256"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--works", default="before,0,32,64,96,128")
    parser.add_argument("--runs", action="store_true", help="the recurrent rows run by run too")
    args = parser.parse_args()
    paths = []
    for p in sorted(glob.glob("bench/results/generalise_*/**/run.json", recursive=True)):
        saved = json.loads(Path(p).read_text(encoding="utf-8"))
        if "loaded" not in p and saved["profiles"][0].get("version") == 11:
            paths.append(p)
    print(f"{len(paths)} saved quiet runs of profile version 11\n")
    print("| work per gate value | host | rows | signed median | median \\|error\\| | within ±25% |")
    print("|---|---|---|---|---|---|")
    groups: dict[str, dict[tuple[str, str], list[float]]] = {}
    for work in args.works.split(","):
        if work == "before":
            layercost._gate_keyed = lambda curve, gates: None
        else:
            layercost._gate_keyed, layercost.CELL_GATE_WORK = KEYED, float(work)
        rows = _rows(paths)
        groups[work] = defaultdict(list)
        for r in rows:
            g = groups[work]
            g[r["host"], "all"].append(r["error"])
            if r["family"] in RECURRENT:
                g[r["host"], "recurrent"].append(r["error"])
                g[r["host"], f"{r['family']}, batch {_size(r['batch'])}"].append(r["error"])
                g[r["host"], f"{r['family']}, fed by {r['fed']}"].append(r["error"])
                g[r["host"], f"run {r['run']}"].append(r["error"])
        for host in sorted({r["host"] for r in rows}):
            for what in ("all", "recurrent"):
                print(f"| {work} | {host}, {what} {_summary(groups[work][host, what])}")
    print("\nThe recurrent rows by batch size and input, before and at each work:\n")
    works = args.works.split(",")
    print("| host | rows | " + " | ".join(f"{w}: median, within" for w in works) + " |")
    print("|---|---|" + "---|" * len(works))
    keys = sorted(k for k in groups[works[0]] if k[1] not in ("all", "recurrent"))
    for key in keys:
        if key[1].startswith("run ") and not args.runs:
            continue
        cells = []
        for w in works:
            es = groups[w][key]
            cells.append(f"{statistics.median(es):+.1%}, {sum(abs(e) <= WITHIN for e in es) / len(es):.0%}")
        print(f"| {key[0]} | {key[1]} ({len(groups[works[0]][key])}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
