"""Is a re-measure under the tuned glibc thresholds set by mallopt in the running child the same as one in a
fresh child started with the variables? Each network: child A (fresh, tuned variables) and child B (default,
measured, then mallopt, measured again), interleaved, repeated; medians of seconds per batch (README.md).

Rerun: PYTHONPATH=. python bench/results/allocator_intel-xeon-2c_in-process/inproc.py REPEATS OUT.json
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from advisor.calibration.allocator import TUNED_GLIBC_ENV

ROOT = str(Path(__file__).resolve().parents[3])
SPECS: dict[str, tuple[dict[str, Any], int, int]] = {
    "tabular 100k x 200": (
        {"task": "tabular", "data": {"examples": 100000, "input_shape": [200], "outputs": 2}},
        1024,
        2,
    ),
    "vision MNIST-like": (
        {"task": "vision", "data": {"examples": 60000, "input_shape": [1, 28, 28], "outputs": 10}},
        64,
        2,
    ),
    "vision 3x32x32": (
        {"task": "vision", "data": {"examples": 50000, "input_shape": [3, 32, 32], "outputs": 10}},
        128,
        1,
    ),
    "generation 8x8": ({"task": "generation", "data": {"examples": 10000, "input_shape": [1, 8, 8]}}, 256, 2),
    "sequence 50x16": (
        {"task": "sequence", "data": {"examples": 20000, "input_shape": [50, 16], "outputs": 5}},
        256,
        2,
    ),
    # the case the allocator matters most for: 36 MB gradients, which glibc's default maps every step
    "wide MLP 3000 (36 MB gradients)": ({"wide": 3000}, 8, 1),
}
CHILD = r"""
import json, sys
from advisor.calibration.allocator import tune_in_process
from advisor.calibration.measure import measure
from advisor.engine import recommend
from advisor.engine.wholesteps import RELU, candidate, linear
spec, batch, threads, switch = json.loads(sys.argv[1])
if "wide" in spec:
    w = spec["wide"]
    cand = candidate([linear(w, w), RELU, linear(w, w), RELU, linear(w, 10)], [w], batch, "adam")
else:
    cand = recommend({**spec, "hardware": {"cpu_cores": 2, "ram_gb": 16}})["candidates"][0]
out = []
def one():
    r = measure(cand, batch_size=batch, threads=threads, min_seconds=0.5)
    cpu = r["user_seconds_per_step"] + r["system_seconds_per_step"]
    out.append([r["seconds_per_batch"], r["system_seconds_per_step"] / max(1e-12, cpu)])
one()
if switch:
    assert tune_in_process()
    one()
print(json.dumps(out))
"""


def run(spec: dict[str, Any], batch: int, threads: int, switch: bool, extra: dict[str, str]) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(extra, PYTHONPATH=ROOT)
    args = [sys.executable, "-c", CHILD, json.dumps([spec, batch, threads, switch])]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(repeats: int, out: str) -> None:
    rows: dict[str, list[dict[str, Any]]] = {}
    for rep in range(repeats):
        for name, (spec, batch, threads) in SPECS.items():
            fresh = run(spec, batch, threads, False, TUNED_GLIBC_ENV)[0]
            default, switched = run(spec, batch, threads, True, {})
            rows.setdefault(name, []).append({"fresh_tuned": fresh, "default": default, "switched": switched})
            print(
                f"{rep} {name} fresh tuned {fresh[0] * 1e3:.2f} ms sys {fresh[1]:.2f} | default "
                f"{default[0] * 1e3:.2f} ms sys {default[1]:.2f} | switched {switched[0] * 1e3:.2f} ms "
                f"sys {switched[1]:.2f}",
                flush=True,
            )
    Path(out).write_text(json.dumps(rows, indent=1))
    for name, rs in rows.items():
        f = statistics.median(r["fresh_tuned"][0] for r in rs)
        d = statistics.median(r["default"][0] for r in rs)
        s = statistics.median(r["switched"][0] for r in rs)
        print(
            f"{name:22s} switched/fresh-tuned {s / f:.3f}  default/fresh-tuned {d / f:.3f} "
            f"(median of {len(rs)})"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, sys.argv[2] if len(sys.argv) > 2 else "rows.json")
