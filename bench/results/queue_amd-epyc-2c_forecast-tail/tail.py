"""What a calibration does after its sweep, from saved `bench queue --forecast` runs: the seconds from its
last mark (the last configuration's end) to the job's end where it did not re-measure, and, where it did,
its first child's start-up beside the stretch from the re-measure's announcement to the end.

    python tail.py RUN.json [RUN.json ...]
"""

from __future__ import annotations

import json
import statistics
import sys


def main(paths: list[str]) -> None:
    tails, restarts = [], []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        for job in run["jobs"]:
            marks, duration = job["marks"], job["duration"]
            if not marks or not duration:
                continue
            announced = [m for m in marks if len(m) > 3 and m[3]]
            if announced:
                restarts.append((marks[0][0], duration - announced[0][0], job["family"]))
            else:
                tails.append(duration - marks[-1][0])
    median_ms, most_ms = statistics.median(tails) * 1000, max(tails) * 1000
    print(f"no re-measure: {len(tails)} jobs, last mark to end {median_ms:.0f} ms median, {most_ms:.0f} most")
    if restarts:
        firsts = [r[0] for r in restarts]
        spans = [r[1] for r in restarts]
        print(
            f"re-measured: {len(restarts)} jobs, first child's start-up {min(firsts):.2f}-{max(firsts):.2f} s"
            f" (median {statistics.median(firsts):.2f}), announced to end {min(spans):.2f}-{max(spans):.2f} s"
            f" (median {statistics.median(spans):.2f}: a start-up and one configuration)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
