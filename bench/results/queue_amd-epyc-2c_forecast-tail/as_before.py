"""A saved `bench queue --forecast` run with its stored plans' tail as commit 1f2e6cd's submit made it (a
0.5 s finishing tail, no stored start-up for a re-measure), so that 1f2e6cd's estimator replays it as it
would have run. 1f2e6cd reads neither the slow steps' word on the marks nor the polled marks.

    python bench/results/queue_amd-epyc-2c_forecast-tail/as_before.py RUN.json > OLD.json
    (in a checkout of 1f2e6cd) PYTHONPATH=. python -m bench queue --from OLD.json
"""

from __future__ import annotations

import json
import sys


def main(path: str) -> None:
    with open(path) as f:
        run = json.load(f)
    for job in run["jobs"]:
        plan = job.get("planned")
        if isinstance(plan, dict) and "sweep" in plan:
            plan["finish_s"] = 0.5
            plan.pop("restart_startup_s", None)
    json.dump(run, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
