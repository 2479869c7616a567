"""Bytes a training step allocates in blocks over glibc's largest dynamic mmap threshold (32 MiB on 64-bit:
under the default allocator each such block is a fresh mapping, faulted in page by page every step), from
the memory model's replay of the step (engine.memory, timeline events), for the networks of allocators.py.
Nothing is measured. The model keeps a recurrent layer's states as one block where PyTorch's CPU LSTM
allocates per time step, so its rows overstate what is mapped.

Rerun: python bench/results/queue_intel-xeon-2c_grid/mapped.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.engine import recommend
from advisor.engine.memory import _Step, replay
from bench.queue_forecast import FORECAST_SPECS, HARDWARE

NETWORKS = {
    "tabular 20k x 32": "ffn",
    "vision MNIST-like": "cnn",
    "vision 3x32x32": "cnn",
    "sequence 50 x 16": "lstm",
    "generation 8x8 images": "gan",
}
BATCHES = (32, 128, 512, 2048)
CEILING = 32 * 2**20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit


def main() -> None:
    print("MB a step allocates in blocks over 32 MiB / in all")
    print(f"{'network':<24}" + "".join(f"{b:>14}" for b in BATCHES))
    for name, family in NETWORKS.items():
        answer = recommend({**FORECAST_SPECS[name], "hardware": HARDWARE})
        candidate = next(c for c in answer["candidates"] if c["family"] == family)
        cells = []
        for b in BATCHES:
            step = _Step(candidate, b, "cpu", record=True)
            replay(step)
            sizes = [n for allocated, _, n in step.t.events or [] if allocated]
            cells.append(f"{sum(n for n in sizes if n > CEILING) / 2**20:.0f} / {sum(sizes) / 2**20:.0f}")
        print(f"{name:<24}" + "".join(f"{c:>14}" for c in cells))


if __name__ == "__main__":
    main()
