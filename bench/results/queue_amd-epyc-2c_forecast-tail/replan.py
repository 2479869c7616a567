"""A saved `bench queue --forecast` run with its stored plans' tail as today's submit makes it
(advisor.forecasts): no finishing tail past the last configuration (engine.sweepplan.FINISH_S) and a
re-measure's second child starting as long as the first child did (`restart_startup_s` = `startup_s`).
Run from the repository root so that the import finds today's constant:

    PYTHONPATH=. python bench/results/queue_amd-epyc-2c_forecast-tail/replan.py RUN.json > NEW.json
    PYTHONPATH=. python -m bench queue --from NEW.json
"""

from __future__ import annotations

import json
import sys

from advisor.engine.sweepplan import FINISH_S


def main(path: str) -> None:
    with open(path) as f:
        run = json.load(f)
    for job in run["jobs"]:
        plan = job.get("planned")
        if isinstance(plan, dict) and "sweep" in plan:
            plan["finish_s"] = FINISH_S
            plan["restart_startup_s"] = plan["startup_s"]
    json.dump(run, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
