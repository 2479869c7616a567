"""`python strip.py RUN.json > OLD.json`: a saved run's marks in the format the estimator at d6cb037 reads
([at, done, total], then the restart flag and the reported chance where there was one; the thread count
each step ran on, stored since, dropped), so that `python -m bench queue --from OLD.json` in a checkout of
that commit replays the run by the estimator as it was."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def strip(mark: list[float | None]) -> list[float | None]:
    head = mark[:4]
    if len(mark) > 4 and mark[4] is not None:
        return [*head, mark[4]]
    return head if len(head) == 4 and head[3] else mark[:3]


if __name__ == "__main__":
    run = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    for job in run["jobs"]:
        job["marks"] = [strip(m) for m in job["marks"]]
    json.dump(run, sys.stdout)
