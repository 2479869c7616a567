"""Recurrent layers of one call against layercost's price: a narrow input (a series' few features) beside an
input as wide as the hidden state (a token embedding's), with and without the input's gradient.

`python bench/results/curves_amd-epyc-2c_recurrent-inputs/cells.py` (from the repository root, with the
harness's MALLOC_* thresholds; about 2 min): a fresh one-thread profile, then each layer timed as the profile
times its points (points.fwd_bwd, median of three rounds), priced by layercost.layer_seconds."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import torch  # after the path above

from advisor.calibration.layers import build_layer
from advisor.calibration.points import fwd_bwd
from advisor.calibration.profile import profile_device
from advisor.engine.costmodel import with_current_factor
from advisor.engine.layercost import layer_seconds
from advisor.engine.profile import at_threads

# (batch, steps, input, hidden): pairs of a narrow input and one as wide as the hidden state
SIZES = (
    (64, 32, 4, 64),
    (64, 32, 64, 64),
    (64, 32, 4, 128),
    (64, 32, 128, 128),
    (64, 32, 8, 256),
    (64, 32, 256, 256),
    (16, 100, 4, 80),
    (16, 100, 80, 80),
    (128, 24, 27, 128),
    (128, 24, 128, 128),
)


def _no_sync() -> None:
    return None


def main() -> None:
    torch.set_num_threads(1)
    rates = at_threads(with_current_factor(profile_device("cpu", threads=[1])), 1)
    print(
        "| layer | batch | steps | input | hidden | input grad | measured ms | model ms | model / measured |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in ("LSTM", "GRU"):
        for b, steps, i, h in SIZES:
            for grad in (False, True):
                layer = {"kind": kind, "args": {"input_size": i, "hidden_size": h, "batch_first": True}}
                module = build_layer(layer)
                x = torch.rand(b, steps, i, requires_grad=grad)
                seconds = statistics.median(fwd_bwd(module, x, _no_sync, 2) for _ in range(3))
                _, compute, other = layer_seconds(layer, [steps, i], b, rates, grad)
                price = compute + other
                print(
                    f"| {kind} | {b} | {steps} | {i} | {h} | {'yes' if grad else 'no'} | "
                    f"{seconds * 1e3:.3f} | {price * 1e3:.3f} | {price / seconds:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
