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
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.queue_forecast import FORECAST_SPECS, HARDWARE  # noqa: E402

# each spec's candidate of the family the grid runs calibrated (their recommendations were timed from the
# worker's profile, which put the LSTM first for the sequence task; without one a TCN leads)
NETWORKS = {
    "tabular 20k x 32": "ffn",
    "vision MNIST-like": "cnn",
    "vision 3x32x32": "cnn",
    "sequence 50 x 16": "lstm",
    "generation 8x8 images": "gan",
}
BATCHES = (32, 128, 512, 2048)


def candidate(name: str) -> dict[str, Any]:
    """The spec's candidate of the family NETWORKS names (mapped.py replays the same ones)."""
    from advisor.engine import recommend

    answer = recommend({**FORECAST_SPECS[name], "hardware": HARDWARE})
    return next(c for c in answer["candidates"] if c["family"] == NETWORKS[name])


def child() -> None:
    """In the child: each network's seconds per batch at each batch size, as JSON."""
    from advisor.calibration import measure
    from advisor.calibration.floats import flush_denormals

    flush_denormals()
    out = {}
    for name in NETWORKS:
        out[name] = {}
        for b in BATCHES:
            m = measure(candidate(name), batch_size=b, threads=1, min_seconds=0.5, max_seconds=6.0)
            out[name][b] = m["seconds_per_batch"]
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
