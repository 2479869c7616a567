"""A/B/C of the profile's point length on the same measured grid: d = 0.06 s points and 0.3 s whole steps
(profile version 5 as first committed), w = whole steps 0.75 s only, l = 0.15 s points and 0.75 s whole
steps (adopted). argv[1] is the order the profiles are taken in: runs 1-3 were dl, ld, dl, runs 4-6 dwl,
lwd, wld. Rerun on a quiet machine, from the repository root:

    PYTHONPATH=. MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 \
        python bench/results/predict_2026-11-23_amd-epyc-2c_ab-point-length/ab.py dwl OUT.json
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import advisor.calibration.profile as prof
from bench.predict import compare_profiles

SECONDS = {"d": (0.06, 0.3), "w": (0.06, 0.75), "l": (0.15, 0.75)}  # (a point, a whole step)


def set_seconds(point: float, whole: float) -> None:
    prof.WHOLE_STEP_SECONDS = whole
    prof._median_seconds.__defaults__ = (point, 1)
    prof._harness_step.__defaults__ = (point,)


order, out = sys.argv[1], Path(sys.argv[2])
profiles = {}
for k in order:
    set_seconds(*SECONDS[k])
    started = time.perf_counter()
    profiles[{"d": "default", "l": "long", "w": "whole"}[k]] = prof.profile_device("cpu", threads=[1, 2])
    print(k, time.perf_counter() - started, os.getloadavg(), flush=True)
result = {"order": order, **compare_profiles(profiles)}
for name in profiles:
    print(name, result[name])
out.write_text(json.dumps(result))
