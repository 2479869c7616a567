"""`python -m bench curves`: does each layer kind sit on the profile curve the cost model reads it off?

Profiles this CPU (advisor.calibration.profile, one thread count), then times forward + backward of layers
of sizes the profile did not measure, the same way the profile times its points (median of repeated runs,
the cost of an empty layer taken off), and sets each against the cost model's seconds for it
(layercost.layer_seconds) and against the older reading it replaced: a convolution over time steps off the
2-D convolutions' curve (before profile v6), a 2-D convolution at its FLOPs alone and a transposed one off
that curve too (before v10: no channel padding, no curve of its own), a max-pool at two passes of the
activation curve (before v11). Rounds alternate profile and layers,
so both see the same load. A kind whose measured/predicted ratios stray far beyond the held-out 2-D
convolutions' needs its own curve (as CausalConv1d got in v6, ConvTranspose2d in v10, MaxPool2d in v11).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any, cast

import torch
from torch import nn

from advisor.calibration.layers import build_layer
from advisor.calibration.points import fwd_bwd, stage
from advisor.calibration.profile import profile_device
from advisor.engine.layercost import layer_seconds
from advisor.engine.profile import ThreadProfile, at_threads
from bench.machine import write_result

# (batch, in channels, out channels, steps, kernel, dilation): none of them a profile point
CAUSAL = (
    (8, 8, 16, 32, 2, 1),
    (32, 16, 32, 64, 3, 1),
    (32, 32, 32, 128, 3, 2),
    (64, 64, 64, 64, 2, 4),
    (32, 64, 64, 256, 3, 8),
    (16, 128, 128, 128, 3, 1),
    (64, 32, 64, 512, 2, 16),
    (32, 128, 128, 256, 3, 4),
)
# (batch, in channels, out channels, side), 3x3 padded: the control, on the curve it was profiled for
CONV2D = ((32, 4, 8, 20), (32, 16, 16, 12), (16, 32, 32, 20), (32, 48, 48, 12), (16, 64, 128, 16))
# the same with 1-3 channels on one side (an image's first layer, a decoder's last), which the kernels pad
# to a block of channels (layercost.channel_padding)
CONV2D_FEW = ((32, 3, 24, 20), (32, 1, 16, 24), (32, 24, 3, 20), (16, 48, 1, 24), (64, 16, 3, 12))
# (batch, in channels, out channels, side, kernel, stride), padding 1: decoders' upsampling and output layers
TRANSPOSED = (
    (32, 96, 48, 6, 4, 2),
    (16, 48, 24, 12, 4, 2),
    (64, 24, 12, 10, 4, 2),
    (32, 48, 3, 20, 3, 1),
    (16, 24, 1, 30, 3, 1),
)

# (batch, channels, side, kernel, stride) of a max-pool: a CNN's stages (2x2) and a published network's
# overlapping 3x3 windows; none of them a profile point
POOLS = (
    (64, 32, 20, 2, 2),
    (16, 64, 42, 2, 2),
    (128, 16, 12, 2, 2),
    (8, 128, 14, 2, 2),
    (32, 64, 28, 3, 2),
)


def _sync() -> None:
    return None


def _base() -> float:
    """The cost of an empty layer, as the profile takes it off its points."""
    x = torch.rand(4, 4, requires_grad=True)
    one = fwd_bwd(nn.Linear(4, 4), x, _sync)
    five = fwd_bwd(nn.Sequential(*(nn.Linear(4, 4) for _ in range(5))), x, _sync)
    return max(one - (five - one) / 4, one * 0.1)


def _row(
    layer: dict[str, Any], shape: tuple[int, ...], batch: int, rates: ThreadProfile, base: float
) -> dict[str, Any]:
    if layer["kind"] == "MaxPool2d":  # on what it reads in a CNN, as the profile times it (stage)
        x = stage(batch, shape[0], shape[1], torch.device("cpu"))
    else:
        x = torch.rand(batch, *shape, requires_grad=True)
    seconds = fwd_bwd(build_layer(layer), x, _sync)
    measured = max(seconds - base, seconds * 0.05)
    _, compute, other = layer_seconds(layer, shape, batch, rates)
    predicted = compute + other  # a max-pool's seconds are "other" (no FLOPs)
    row = {"kind": layer["kind"], "args": layer["args"], "batch": batch, "measured": measured}
    row["predicted"] = predicted  # off the curve the cost model reads this kind from
    if layer["kind"] == "CausalConv1d":  # the same layer read off the 2-D convolutions' curve
        conv_only = ThreadProfile(**{**rates, "conv1d": rates["conv"]})
        row["older"] = layer_seconds(layer, shape, batch, conv_only)[1]
    elif layer["kind"] == "MaxPool2d":  # two passes of the activation curve (before v11)
        no_pool = cast(ThreadProfile, {k: v for k, v in rates.items() if k != "pool"})
        row["older"] = layer_seconds(layer, shape, batch, no_pool)[2]
    else:  # a convolution at its FLOPs alone, off the 2-D curve (the v9 cost model)
        unpadded = ThreadProfile(**{**rates, "channel_block": 1, "conv_transpose": []})
        row["older"] = layer_seconds(layer, shape, batch, unpadded)[1]
    return row


def run(rounds: int) -> list[dict[str, Any]]:
    torch.set_num_threads(1)
    rows: list[dict[str, Any]] = []
    for _ in range(rounds):
        rates = at_threads(profile_device("cpu", threads=[1]), 1)
        base = _base()
        for b, ci, co, steps, k, d in CAUSAL:
            args = {"in_channels": ci, "out_channels": co, "kernel_size": k, "dilation": d}
            rows.append(_row({"kind": "CausalConv1d", "args": args}, (steps, ci), b, rates, base))
        for b, ci, co, side in CONV2D + CONV2D_FEW:
            args = {"in_channels": ci, "out_channels": co, "kernel_size": 3, "padding": 1}
            rows.append(_row({"kind": "Conv2d", "args": args}, (ci, side, side), b, rates, base))
        for b, ci, co, side, k, stride in TRANSPOSED:
            args = {"in_channels": ci, "out_channels": co, "kernel_size": k, "stride": stride, "padding": 1}
            rows.append(_row({"kind": "ConvTranspose2d", "args": args}, (ci, side, side), b, rates, base))
        for b, ch, side, k, stride in POOLS:
            args = {"kernel_size": k, "stride": stride}
            rows.append(_row({"kind": "MaxPool2d", "args": args}, (ch, side, side), b, rates, base))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Per layer: median measured ms and median measured / predicted over the rounds."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(json.dumps([row["kind"], row["args"], row["batch"]]), []).append(row)
    lines = [
        "| kind | batch | args | measured ms | measured / its curve | measured / the older reading |",
        "|---|---|---|---|---|---|",
    ]
    for group in groups.values():
        first = group[0]
        measured_ms = 1e3 * statistics.median(r["measured"] for r in group)
        own = statistics.median(r["measured"] / r["predicted"] for r in group)
        older = [r["measured"] / r["older"] for r in group if "older" in r]
        older_ratio = f"{statistics.median(older):.2f}" if older else "—"
        cells = [first["kind"], first["batch"], json.dumps(first["args"]), f"{measured_ms:.3f}", f"{own:.2f}"]
        lines.append("| " + " | ".join(str(cell) for cell in [*cells, older_ratio]) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench curves", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="a folder for result.json and table.md")
    args = parser.parse_args(argv)
    rows = run(args.rounds)
    if args.out is None:
        print(table(rows))
    else:
        write_result(args.out, rows, table(rows) + "\n")
    return 0
