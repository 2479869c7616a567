"""Exploration: measured seconds of one training step at batch 128 (one thread) of networks over time steps at
chosen widths, on a series of STEPS steps of FEATURES features.

    PYTHONPATH=. python bench/results/advice_amd-epyc-2c_time-first/explore_per_batch.py 128 1 \
        lstm:96,gru:96,tcn:96"""

from __future__ import annotations

import sys

from advisor.calibration import measure
from advisor.engine import normalise
from advisor.engine.candidate import to_candidate
from advisor.engine.families import GRU, LSTM, recurrent, temporal

if __name__ == "__main__":
    steps, features = int(sys.argv[1]), int(sys.argv[2])
    spec = normalise(
        {
            "task": "sequence",
            "data": {"examples": 5000, "input_shape": [steps, features], "outputs": 4},
            "hardware": {"cpu_cores": 2, "ram_gb": 8},
            "target": {"accuracy": 0.9},
        }
    )
    for item in sys.argv[3].split(","):
        family, _, width = item.partition(":")
        if family == "tcn":
            made = temporal._tcn(spec, int(width))
        else:
            made = recurrent._recurrent(spec, {"lstm": LSTM, "gru": GRU}[family], int(width))
        candidate = to_candidate(made, spec)
        m = measure(candidate, batch_size=128, threads=1, min_iterations=5, min_seconds=1.0)
        mflop = candidate["flops_per_example"] / 1e6
        print(item, candidate["parameters"], f"{mflop:.1f} MFLOP", f"{m['seconds_per_batch'] * 1e3:.1f} ms")
