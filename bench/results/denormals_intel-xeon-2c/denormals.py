"""Every network of the predict grid (bench.predict_grid, two a family) timed with denormal floats kept and
flushed to zero, at batches 16 and 64 on 1 and 2 threads: measure()'s mean step, each mode in a fresh process
of its own (the mode is per thread: an intra-op thread keeps the one it started with), in alternating
rounds. Prints a markdown table: the medians over rounds, kept / flushed.

`python bench/results/denormals_intel-xeon-2c/denormals.py [--rounds 2] [--min-seconds 0.3]` (from the
repository root, under the tuned MALLOC_* thresholds)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
import advisor.calibration as harness
torch.set_flush_denormal(sys.argv[2] == "flushed")  # before any operator: every thread takes it
from bench.predict_grid import grid_networks
rows = {}
for name, candidate in grid_networks(2):
    for batch in (16, 64):
        for threads in (1, 2):
            m = harness.measure(candidate, batch_size=batch, threads=threads, min_seconds=float(sys.argv[3]))
            if m["status"] == "ok":
                rows[f"{name} b{batch} t{threads}"] = [m["mean_seconds_per_batch"], bool(m["unreliable"])]
print(json.dumps(rows))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--min-seconds", type=float, default=0.3)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, list[float | bool]]]] = {"kept": [], "flushed": []}
    for _ in range(args.rounds):
        for mode in runs:
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(ROOT), mode, str(args.min_seconds)],
                capture_output=True,
                text=True,
                check=True,
            )
            runs[mode].append(json.loads(done.stdout.splitlines()[-1]))
    keys = [k for k in runs["kept"][0] if all(k in r for rs in runs.values() for r in rs)]
    print("| configuration | kept, ms | flushed, ms | kept / flushed | marked unreliable (rounds) |")
    print("|---|---:|---:|---:|---|")
    ratios = []
    for key in keys:
        kept = statistics.median(float(r[key][0]) for r in runs["kept"])
        flushed = statistics.median(float(r[key][0]) for r in runs["flushed"])
        marked = sum(bool(r[key][1]) for rs in runs.values() for r in rs)
        ratios.append(kept / flushed)
        print(f"| {key} | {kept * 1e3:.2f} | {flushed * 1e3:.2f} | {kept / flushed:.2f} | {marked} |")
    slow = sorted(k for k, r in zip(keys, ratios, strict=True) if r > 1.1)
    print(f"\n{len(keys)} configurations; kept / flushed median {statistics.median(ratios):.2f}, ")
    print(f"over 1.1 on {len(slow)}: {', '.join(slow)}")


if __name__ == "__main__":
    main()
