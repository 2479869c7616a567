"""The grid runs' networks timed whole (calibration.measure, as a sweep times a configuration) at batches 32
to 2048, one thread, under glibc's default allocator and under the harness's tuned thresholds, each in a
fresh process (glibc reads its variables at start). An "auto" calibration's first child, which times every
configuration of a sweep, runs under the default; the device profile that prices them under the tuned ones.

Rerun: python bench/results/queue_intel-xeon-2c_grid/allocators.py        # about 4 min on 2 cores
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.queue_forecast import FORECAST_SPECS, HARDWARE  # noqa: E402

NETWORKS = (
    "tabular 20k x 32",
    "vision MNIST-like",
    "vision 3x32x32",
    "sequence 50 x 16",
    "generation 8x8 images",
)
BATCHES = (32, 128, 512, 2048)


def child() -> None:
    """In the child: each network's seconds per batch at each batch size, as JSON."""
    from advisor.calibration import measure
    from advisor.calibration.floats import flush_denormals
    from advisor.engine import recommend

    flush_denormals()
    out = {}
    for name in NETWORKS:
        candidate = recommend({**FORECAST_SPECS[name], "hardware": HARDWARE})["candidates"][0]
        out[name] = {
            b: measure(candidate, batch_size=b, threads=1, min_seconds=0.5, max_seconds=6.0)[
                "seconds_per_batch"
            ]
            for b in BATCHES
        }
    json.dump(out, sys.stdout)


def main() -> None:
    from advisor.calibration.allocator import TUNED_GLIBC_ENV

    base = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    runs = {}
    for name, env in (("default", base), ("tuned", {**base, **TUNED_GLIBC_ENV})):
        done = subprocess.run(
            [sys.executable, __file__, "--child"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        runs[name] = json.loads(done.stdout)
    print("seconds per batch, 1 thread: default / tuned (default's ms)")
    print(f"{'network':<24}" + "".join(f"{b:>18}" for b in BATCHES))
    for name in NETWORKS:
        cells = []
        for b in BATCHES:
            d, t = runs["default"][name][str(b)], runs["tuned"][name][str(b)]
            cells.append(f"{d / t:.2f} ({d * 1000:.1f})")
        print(f"{name:<24}" + "".join(f"{c:>18}" for c in cells))


if __name__ == "__main__":
    child() if "--child" in sys.argv else main()
