"""Each grid configuration's measured seconds per batch against the seconds per batch its plan priced it at
(the inverse of engine.sweepplan.configuration_seconds on the planned step), by family and batch size, over
the quiet grid runs' reliable rows. Nothing is measured.

Rerun: python bench/results/queue_intel-xeon-2c_grid/batches.py
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from advisor.engine import sweepplan as sp  # noqa: E402

sys.path.insert(0, str(ROOT / "bench/results/queue_intel-xeon-2c_in-child-remeasure"))
from reprice import per_batch_of  # noqa: E402

HERE = Path(__file__).resolve().parent
QUIET = ("build-grid1", "build-grid2", "held-out-grid-quiet")


def main() -> None:
    ratios: dict[tuple[str, int], list[float]] = defaultdict(list)
    for name in QUIET:
        run = json.loads((HERE / "runs" / f"{name}.json").read_text())
        for job in run["jobs"]:
            plan, sweep = job["planned"], sp.sweep_from_json(job["planned"])
            assert sweep is not None
            priced = dict(zip(zip(plan["batches"], plan["threads"], strict=True), plan["steps"], strict=True))
            for b, t, s, unreliable in sp.first_child(job["measured"]):
                if not unreliable and (b, t) in priced:
                    ratios[job["family"], b].append(s / per_batch_of(priced[b, t], sweep))
    families = sorted({f for f, _ in ratios})
    batches = sorted({b for _, b in ratios})
    print("measured / priced seconds per batch (median over the rows; rows)")
    print(f"{'family':<8}" + "".join(f"{b:>13}" for b in batches))
    for family in families:
        rows = [ratios.get((family, b)) for b in batches]
        cells = [f"{statistics.median(r):.2f} ({len(r)})" if r else "—" for r in rows]
        print(f"{family:<8}" + "".join(f"{c:>13}" for c in cells))


if __name__ == "__main__":
    main()
