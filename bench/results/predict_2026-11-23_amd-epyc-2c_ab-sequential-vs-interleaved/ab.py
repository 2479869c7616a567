"""A/B: the sequential profile (abb9b62) against the interleaved one (e6305db), on the same measured grid.

Rerun on a quiet machine, from the repository root (pair1: "on", pair2: "no", pair3: "on"; the argument is
the order the two profiles are taken in, o = sequential, n = interleaved):

    git show abb9b62:advisor/calibration/profile.py > /tmp/profile_old.py
    PYTHONPATH=. MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 \
        python bench/results/predict_2026-11-23_amd-epyc-2c_ab-sequential-vs-interleaved/ab.py on OUT.json
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

from advisor.calibration.profile import profile_device as interleaved
from advisor.engine.costmodel import step_cost
from bench.predict import measure_grid
from bench.predict_grid import grid_networks
from bench.predict_runs import thread_choice

spec = importlib.util.spec_from_file_location("profile_old", "/tmp/profile_old.py")
assert spec is not None and spec.loader is not None
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)

order, out = sys.argv[1], Path(sys.argv[2])
profiles = {}
for k in order:
    started = time.perf_counter()
    profiles["old" if k == "o" else "new"] = (old.profile_device if k == "o" else interleaved)(
        "cpu", threads=[1, 2]
    )
    print(k, time.perf_counter() - started, os.getloadavg(), flush=True)
networks = grid_networks(2)
load_start = os.getloadavg()
rows = measure_grid(networks, [16, 64, 256], [1, 2], 0.3)
result = {"order": order, "load": [load_start, os.getloadavg()], "profiles": profiles, "rows": rows}
candidates = dict(networks)
for name, profile in profiles.items():
    predicted = [
        {
            **r,
            "profiled": step_cost(
                candidates[r["network"]], batch_size=r["batch"], threads=r["threads"], profile=profile
            ).seconds,
        }
        for r in rows
    ]
    errors = [abs(r["profiled"] - r["measured"]) / r["measured"] for r in predicted]
    result[name] = {
        "threads": thread_choice(predicted)["within_5pct"],
        "median": statistics.median(errors),
        "within20": sum(e <= 0.2 for e in errors) / len(errors),
    }
    print(name, result[name])
out.write_text(json.dumps(result))
