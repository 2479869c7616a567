"""Which unknown costs the ETA most: saved `bench queue --forecast` runs replayed by today's estimator with
plans that know more than a plan can (README.md, "The oracle replays").

Rerun: python bench/results/allocator_intel-xeon-2c_in-process/oracle.py RUN.json [RUN.json ...]
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine.sweepplan import configuration_seconds, sweep_from_json
from bench.queue_forecast import replay, score

Run = dict[str, Any]


def _first_child(job: dict[str, Any]) -> list[list[Any]]:
    rows = job["measured"]
    return [m for m in rows if m[3] == rows[0][3] and m[2]]


def knows_configurations(result: Run, *, real_price: bool) -> Run:
    """Each sweep's plan is the configurations it ran, at the plan's price (or at the price its measured
    seconds per batch give, `real_price`), with no budget left to decide."""
    out = copy.deepcopy(result)
    for job in out["jobs"]:
        plan = job["planned"]
        if not plan or not plan.get("sweep") or not job.get("measured"):
            continue
        sweep = sweep_from_json(plan)
        assert sweep is not None
        first = _first_child(job)
        planned = dict(zip(zip(plan["batches"], plan["threads"], strict=True), plan["steps"], strict=True))
        plan["steps"] = [
            configuration_seconds(s, sweep) if real_price or (b, t) not in planned else planned[b, t]
            for b, t, s, *_ in first
        ]
        plan["batches"], plan["threads"] = [m[0] for m in first], [m[1] for m in first]
        plan["steps_budget_s"] = None
        plan.pop("sweep")
    return out


def knows_durations(result: Run, *, restart_known: bool) -> Run:
    """Each plan is its configurations' real durations and its child's real start-up; `restart_known`: also
    whether the re-measure comes (its chance 1 or 0, the job's own word on it dropped)."""
    out = copy.deepcopy(result)
    for job in out["jobs"]:
        plan, marks = job["planned"], job["marks"]
        if not plan or not plan.get("sweep") or not job.get("measured"):
            continue
        first = _first_child(job)
        restarted = any(len(m) > 3 and m[3] for m in marks)
        steps = []
        for a, b in itertools.pairwise(marks):
            if (len(a) > 3 and a[3]) or (len(b) > 3 and b[3]):
                break
            if b[1] - a[1] == 1:
                steps.append(b[0] - a[0])
        plan["steps"] = steps
        plan["batches"], plan["threads"] = (
            [m[0] for m in first][: len(steps)],
            [m[1] for m in first][: len(steps)],
        )
        plan["steps_budget_s"], plan["startup_s"] = None, marks[0][0]
        plan.pop("sweep")
        if restart_known:
            plan["restart_chance"] = 1.0 if restarted else 0.0
            job["marks"] = [[*m[:4], None, *m[5:]] if len(m) > 4 else m for m in marks]
            for e in job["eta"]:
                if e.get("mark") and len(e["mark"]) > 4:
                    e["mark"] = [*e["mark"][:4], None, *e["mark"][5:]]
    return out


def main(files: list[str]) -> None:
    cases: list[tuple[str, Callable[[Run], Run], bool]] = [
        ("today", lambda r: r, True),
        ("knows the configurations", lambda r: knows_configurations(r, real_price=False), True),
        ("... at their measured price", lambda r: knows_configurations(r, real_price=True), True),
        ("knows the real durations", lambda r: knows_durations(r, restart_known=False), False),
        ("... and the re-measure", lambda r: knows_durations(r, restart_known=True), False),
    ]
    for label, change, measured in cases:
        inside = total = 0
        each = []
        for name in files:
            with open(name) as f:
                run = json.load(f)
            s = score(replay(change(run), measured=measured))["eta_from_25pct_of_run"]
            inside, total = inside + s["within"], total + s["n"]
            each.append(f"{s['within']}/{s['n']}")
        print(f"{label}: {inside}/{total} ({inside / total:.0%})", " ".join(each))


if __name__ == "__main__":
    main(sys.argv[1:])
