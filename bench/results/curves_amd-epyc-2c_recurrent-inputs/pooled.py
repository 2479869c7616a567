"""The recurrent families' error over this VM's saved version-11 generalise runs, split by what feeds the
network (a token embedding or features) and by sequence length; nothing is measured.

`python bench/results/curves_amd-epyc-2c_recurrent-inputs/pooled.py` (from the repository root)."""

from __future__ import annotations

import glob
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench.generalise import score  # after the path above

LENGTHS = ((16, "<= 16"), (64, "17-64"), (128, "65-128"), (10**9, "> 128"))


def main() -> None:
    cells: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    runs = 0
    for path in sorted(glob.glob("bench/results/generalise_amd-epyc-2c_*/**/run.json", recursive=True)):
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        if "loaded" in path or saved["profiles"][0].get("version") != 11:
            continue
        runs += 1
        by_name = {c["name"]: c for c in saved["configurations"]}
        for row in score(saved)["rows"]:
            if not row["quiet"] or row["family"] not in ("lstm", "gru"):
                continue
            candidate = by_name[row["name"]]["candidate"]
            kinds = {item["kind"] for item in candidate["networks"]["model"]}
            fed = "tokens" if "Embedding" in kinds else "features"
            steps = int(candidate["io"]["input_shape"][0])
            length = next(name for top, name in LENGTHS if steps <= top)
            for key in ((row["family"], fed, "all"), ("both", fed, length)):
                cells[key].append(row["error"])
    print(f"{runs} runs on amd-epyc-2c, quiet rows\n")
    print("| family | fed by | steps | rows | median error |")
    print("|---|---|---|---|---|")
    order = {name: k for k, (_, name) in enumerate(LENGTHS)}
    for (family, fed, length), errors in sorted(
        cells.items(), key=lambda kv: (kv[0][0], kv[0][1], order.get(kv[0][2], -1))
    ):
        print(f"| {family} | {fed} | {length} | {len(errors)} | {statistics.median(errors):+.1%} |")


if __name__ == "__main__":
    main()
