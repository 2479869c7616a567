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
import sys
import time
from pathlib import Path

from advisor.calibration.profile import profile_device as interleaved
from bench.predict import compare_profiles

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
result = {"order": order, **compare_profiles(profiles)}
for name in profiles:
    print(name, result[name])
out.write_text(json.dumps(result))
