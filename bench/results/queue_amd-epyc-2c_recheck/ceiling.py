"""How far the ETA could get if it knew what the job would do: every saved `bench queue --forecast` run
(both hosts, all folders) replayed by today's estimator, then again with what only hindsight knows given to
it one piece at a time:

1. today's estimator (bench.queue_forecast.replay);
2. + count: the number of configurations the sweep actually ran (its budget stop lifted: this is the truth);
3. + seconds: each configuration's actual seconds as its plan (so every pace is 1);
4. + re-measure: whether one came (its chance 1 or 0, the job's own reported chance ignored).

What is still missed at 4 is the re-measure's own length, the first child's start-up, and the step under
way's own word on what it still needs. Nothing here is measured; the estimator's code is patched only in this
process.

Rerun: python bench/results/queue_amd-epyc-2c_recheck/ceiling.py
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import advisor.engine.remaining as rm  # noqa: E402
import advisor.engine.sweepplan as sweepplan  # noqa: E402
from bench.queue_forecast import TOLERANCE, replay  # noqa: E402

LEVELS = ("today", "+ count", "+ seconds", "+ re-measure")


def runs() -> Iterator[dict[str, Any]]:
    for path in sorted((ROOT / "bench/results").glob("queue_*/**/*.json")):
        run = json.loads(path.read_text())
        if "jobs" in run:
            yield run


def samples(job: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The job's ETA samples from 25% of its run on."""
    if job["duration"]:
        yield from (e for e in job["eta"] if e["elapsed_share"] >= 0.25 and e["actual"] > 0)


class Truth:
    """What each job of a run actually did, found from its stored plan (the object replay passes on)."""

    def __init__(self, run: dict[str, Any]) -> None:
        self.jobs: dict[int, dict[str, Any]] = {}
        for job in run["jobs"]:
            every = rm.marks_from_json(job["marks"])
            self.jobs[id(job["planned"])] = {
                "count": max([m.done for m in every if not m.restart] or [0.0]),
                "seconds": {k: s for k, _, s in rm._whole_steps(every)},
                "remeasured": any(m.restart for m in every),
            }
        self.now: dict[str, Any] = {}  # the job whose sample is being predicted


@contextmanager
def hindsight(truth: Truth, level: int) -> Iterator[None]:
    """The estimator, and the plan replay gives it, told what the job did, up to `level`."""
    saved = (rm.expected_total, rm._steps_left, rm.restart_chance, rm.device_pace, sweepplan.with_measured)
    _, steps_left, _, _, measured = saved

    def with_truth(plan: rm.WorkPlan, stored: Any, rows: Any, marks: Any) -> rm.WorkPlan:
        truth.now = truth.jobs[id(stored)]
        plan = measured(plan, stored, rows, marks)
        if level >= 2:
            n = max(len(plan.steps), int(truth.now["count"]))
            plan = replace(plan, steps=tuple(truth.now["seconds"].get(k, plan.step_s(k)) for k in range(n)))
        if level >= 3:
            plan = replace(plan, restart_chance=1.0 if truth.now["remeasured"] else 0.0)
        return plan

    sweepplan.with_measured = with_truth
    if level >= 1:
        rm.expected_total = lambda plan, last: truth.now["count"]
        rm._steps_left = lambda plan, marks, el, since, pace_of: steps_left(
            replace(plan, steps_budget_s=None), marks, el, since, pace_of
        )
    if level >= 2:
        rm.device_pace = lambda history, keep=10: 1.0  # the plan is the truth: nothing to learn from others
    if level >= 3:
        rm.restart_chance = lambda plan, marks: plan.restart_chance
    try:
        yield
    finally:
        rm.expected_total, rm._steps_left, rm.restart_chance, rm.device_pace, sweepplan.with_measured = saved


def main() -> None:
    # level -> group -> [within, samples]
    tally: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for run in runs():
        truth = Truth(run)
        for level in range(len(LEVELS)):
            with hindsight(truth, level):
                replayed = replay(run)["jobs"]
            for job in replayed:
                remeasured = truth.jobs[id(job["planned"])]["remeasured"]
                for e in samples(job):
                    inside = abs(e["predicted"] - e["actual"]) <= TOLERANCE * e["actual"]
                    for group in ("all", job["family"], "re-measured" if remeasured else "not"):
                        tally[level][group][0] += inside
                        tally[level][group][1] += 1
    names = list(tally[0])
    print("ETA samples within ±25% of what remained, from 25% of each job's run on\n")
    print(f"{'hindsight':<14}" + "".join(f"{g:>13}" for g in names))
    for level, label in enumerate(LEVELS):
        print(f"{label:<14}" + "".join(f"{tally[level][g][0] / tally[level][g][1]:>13.0%}" for g in names))
    print(f"{'samples':<14}" + "".join(f"{tally[0][g][1]:>13}" for g in names))


if __name__ == "__main__":
    main()
