"""Single layers' forward + backward timed as the profile times its points (calibration.points.fwd_bwd:
median after a warm-up), at the batch the profile's curves use (32) and up to 64x it, one thread then two:
seconds per example against batch 32's (1.00: the rate the profile's curve carries past its largest point,
engine.profile.interpolate), each with one batch's output beside it. Run under the harness's tuned
allocator, denormals flushed, as the profile's points are. It asks whether the layers themselves slow down
past the caches at large batches (README.md: they barely do; the allocator does).

Rerun: MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 \
    python bench/results/queue_intel-xeon-2c_grid/layers.py        # under a minute on 2 cores
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from advisor.calibration.floats import flush_denormals
from advisor.calibration.points import fwd_bwd

BATCHES = (32, 128, 512, 2048)
# (name, layer, one example's input shape, its output values): the grid runs' networks' kinds, and the
# profile's largest convolution (64 -> 64 channels on 24 x 24)
LAYERS = (
    (
        "conv 1->32 on 28x28 (MNIST CNN's first)",
        lambda: nn.Conv2d(1, 32, 3, padding=1),
        (1, 28, 28),
        32 * 784,
    ),
    (
        "conv 64->64 on 24x24 (profile's largest)",
        lambda: nn.Conv2d(64, 64, 3, padding=1),
        (64, 24, 24),
        64 * 576,
    ),
    ("linear 784->128", lambda: nn.Linear(784, 128), (784,), 128),
    ("lstm 16->64, 50 steps", lambda: nn.LSTM(16, 64, batch_first=True), (50, 16), 50 * 64),
)


def main() -> None:
    flush_denormals()
    sync = lambda: None  # noqa: E731 - a CPU needs none
    for threads in (1, 2):
        torch.set_num_threads(threads)
        print(f"\n{threads} thread(s): seconds per example against batch 32's (activations of one batch)")
        print(f"{'layer':<42}" + "".join(f"{b:>18}" for b in BATCHES))
        for name, make, shape, values in LAYERS:
            layer = make()
            cells, base = [], 0.0
            for b in BATCHES:
                x = torch.rand(b, *shape, requires_grad=True)
                per_example = fwd_bwd(layer, x, sync) / b
                base = base or per_example
                cells.append(f"{per_example / base:.2f} ({b * values * 4 / 2**20:.1f} MB)")
            print(f"{name:<42}" + "".join(f"{c:>18}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
