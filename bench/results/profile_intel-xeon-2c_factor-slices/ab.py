"""The step factor of profiles taken back to back in fresh processes (as a worker takes them,
`advisor.calibration.profile` in a child under the tuned allocator), alternating two checkouts: the factor's
whole step timed once at the end of the profile (`before`: the code as it stands) and in four slices spread
over it (`sliced`: a checkout with the change this folder's README describes, not adopted). ABBA order, so
that a drift over the run falls on both.

    PYTHONPATH=. python bench/results/profile_intel-xeon-2c_factor-slices/ab.py SLICED_CHECKOUT OUT.json
    PYTHONPATH=. python bench/results/profile_intel-xeon-2c_factor-slices/ab.py --report OUT.json
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from typing import Any

from advisor.calibration.allocator import child_environment

ROUNDS = 8


def profile_from(checkout: str) -> dict[str, Any]:
    env = {**child_environment("tuned"), "PYTHONPATH": checkout}
    command = [sys.executable, "-m", "advisor.calibration.profile", "--device", "cpu", "--threads", "1,2"]
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, check=True)
    profile: dict[str, Any] = json.loads(done.stdout)
    return profile


def run(sliced: str, out: str) -> None:
    checkouts = {"before": os.getcwd(), "sliced": sliced}
    profiles: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for i in range(ROUNDS):
        for name in ("before", "sliced") if i % 2 == 0 else ("sliced", "before"):
            profiles[name].append(profile_from(checkouts[name]))
    with open(out, "w") as f:
        json.dump(profiles, f)


def report(path: str) -> None:
    with open(path) as f:
        profiles = json.load(f)
    for name, group in profiles.items():
        for count in ("1", "2"):
            factors = [p["threads"][count]["step_factor"] for p in group]
            spread = max(factors) / min(factors)
            cv = statistics.stdev(factors) / statistics.fmean(factors)
            listed = ", ".join(f"{x:.2f}" for x in factors)
            print(f"{name:<7} {count} thread(s): {listed}; max/min {spread:.2f}, sd/mean {cv:.1%}")


if __name__ == "__main__":
    if sys.argv[1] == "--report":
        report(sys.argv[2])
    else:
        run(sys.argv[1], sys.argv[2])
