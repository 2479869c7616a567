"""A saved `bench queue --forecast` run with its stored plans' tail as a given commit's submit makes it, so
that that commit's estimator replays the run as it would have run it:

- `today` (run from the repository root, so that the import finds today's constant): no finishing tail
  past the last configuration (engine.sweepplan.FINISH_S), and a re-measure's second child starting as
  long as the first child did (`restart_startup_s` = `startup_s`);
- `1f2e6cd`: a 0.5 s finishing tail, no stored start-up for a re-measure (1f2e6cd reads neither the slow
  steps' word on the marks nor the polled marks).

    PYTHONPATH=. python bench/results/queue_amd-epyc-2c_forecast-tail/replan.py today RUN.json > NEW.json
    PYTHONPATH=. python -m bench queue --from NEW.json
    python .../replan.py 1f2e6cd RUN.json > OLD.json  # then, in a checkout of 1f2e6cd:
    PYTHONPATH=. python -m bench queue --from OLD.json
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _today(plan: dict[str, Any]) -> None:
    from advisor.engine.sweepplan import FINISH_S

    plan["finish_s"] = FINISH_S
    plan["restart_startup_s"] = plan["startup_s"]


def _at_1f2e6cd(plan: dict[str, Any]) -> None:
    plan["finish_s"] = 0.5
    plan.pop("restart_startup_s", None)


def main(commit: str, path: str) -> None:
    tail = {"today": _today, "1f2e6cd": _at_1f2e6cd}[commit]
    with open(path) as f:
        run = json.load(f)
    for job in run["jobs"]:
        plan = job.get("planned")
        if isinstance(plan, dict) and "sweep" in plan:
            tail(plan)
    json.dump(run, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
