"""Where a doubling sweep's configurations part from its plan, over saved `bench queue --forecast` runs: each
job's measured configurations against those its submit-time plan counted (the same, more, fewer, both), the
extra ones at a thread count kept after an unreliable measurement of it (no ground to prune it), and, per
doubling both measured, the measured throughput gain against the plan's, with how often the plateau rule's
flag (a gain under 5%) differs. README.md, "Why the sweep's count differs".

Rerun: python bench/results/queue_amd-epyc-2c_remeasure-total/sweeps.py 'RUNS/*.json' [...]
"""

from __future__ import annotations

import glob
import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine.sweepplan import (
    PLATEAU_GAIN,
    SweepPlan,
    configuration_seconds,
    first_child,
    sweep_from_json,
)


def per_batch(seconds: float, sweep: SweepPlan) -> float:
    """The seconds per batch a planned configuration's seconds were priced at (configuration_seconds
    inverted: it rises with the seconds per batch)."""
    lo, hi = 1e-7, 10.0
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if configuration_seconds(mid, sweep) < seconds else (lo, mid)
    return lo


def _best(rates: dict[tuple[int, int], float], batch: int) -> float | None:
    """The best examples per second at a batch size, over its thread counts."""
    found = [batch / s for (b, _), s in rates.items() if b == batch]
    return max(found) if found else None


def job(j: dict[str, Any]) -> tuple[str, int, list[tuple[float, float]]] | None:
    """(how the configurations differ, extra ones after an unreliable one, [(measured, planned gain)])."""
    plan, sweep = j["planned"], sweep_from_json(j["planned"])
    if sweep is None or sweep.batch_sizes or not j["measured"]:
        return None
    rows = first_child(j["measured"])  # the sweep's own rows: a re-measure runs under the other allocator
    planned = {
        (b, t): per_batch(s, sweep)
        for b, t, s in zip(plan["batches"], plan["threads"], plan["steps"], strict=True)
    }
    ran = [(r[0], r[1]) for r in rows]
    extra = [c for c in ran if c not in planned]
    missing = [c for c in planned if c not in ran]
    kept = [c for c in extra if any(r[3] for r in rows if r[1] == c[1] and r[0] < c[0])]
    how = {(False, False): "same", (True, False): "more", (False, True): "fewer"}.get(
        (bool(extra), bool(missing)), "both"
    )
    measured = {(r[0], r[1]): r[2] for r in rows}
    sizes = sorted({b for b, _ in measured})
    gains = []
    for b1, b2 in itertools.pairwise(sizes):
        m1, m2, p1, p2 = _best(measured, b1), _best(measured, b2), _best(planned, b1), _best(planned, b2)
        if b2 == 2 * b1 and m1 and m2 and p1 and p2:
            gains.append((m2 / m1, p2 / p1))
    return how, len(kept), gains


def main(patterns: list[str]) -> None:
    kinds: dict[tuple[str, str], list[int]] = {}
    ratios: list[float] = []
    differ = 0
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            for j in json.loads(Path(path).read_text(encoding="utf-8"))["jobs"]:
                found = job(j)
                if found is None:
                    continue
                how, kept, gains = found
                kinds.setdefault((j["family"], how), []).append(kept)
                for measured, planned in gains:
                    ratios.append(math.log(measured / planned))
                    differ += (measured < PLATEAU_GAIN) != (planned < PLATEAU_GAIN)
    print("| family | configurations against the plan | jobs | extra after an unreliable one |")
    print("|---|---|---:|---:|")
    for (family, how), kept in sorted(kinds.items()):
        print(f"| {family} | {how} | {len(kept)} | {sum(kept)} |")
    ratios.sort()
    n = len(ratios)
    print(
        f"\n{n} doublings: measured / planned gain, median {math.exp(ratios[n // 2]):.3f}, 10-90% "
        f"{math.exp(ratios[n // 10]):.3f}-{math.exp(ratios[9 * n // 10]):.3f}; the plateau flag differs "
        f"in {differ} ({differ / n:.0%})"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
