"""Seconds of one network's layers, forward + backward, for a batch, read off a thread profile's curves.

Each layer's time is read off the profile's curve for its kind at its forward FLOPs for the batch
(products: Linear, RBM; convolutions; recurrent cells per time step) or, for the other layers, at the values
it touches (activations, pooling, normalisation, embedding look-ups). A product is also at least as slow as
moving its operands through memory at the element-wise rate (the larger of compute and memory time, as in a
roofline). The family's step (engine.costmodel) adds the losses, the optimiser and the step's fixed cost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from advisor.contract import Layer
from advisor.engine.layers import (
    BRANCHES,
    CD1_PRODUCT,
    CONVOLUTION,
    GATED_CELL,
    KINDS,
    LOOKUP,
    PLAIN_CELL,
    POOLING,
    PRODUCT,
    TEMPORAL_CONVOLUTION,
    VIEW,
)
from advisor.engine.layershapes import GATES, Shape
from advisor.engine.profile import (
    CELL_SIZES,
    GRU_CURVE,
    GRU_LONG_CURVE,
    PLAIN_CELL_CURVE,
    ThreadProfile,
    interpolate,
)

# forward + backward of a product whose input needs no gradient: the forward and the weight's gradient, two
# of the three products the profile timed
NO_INPUT_GRAD_SHARE = 2 / 3
SEQUENCE_STEPS = 8  # time steps of the profile's recurrent cells (calibration.profile.LSTM_STEPS)
LONG_SEQUENCE_STEPS = 128  # and of its second sequence point (calibration.profile.LONG_STEPS)
CELL_STEPS = 128  # time steps of the profile's second curve of each recurrent cell (version >= 7)
# A gated cell's (LSTM, GRU) work per step on a CPU: its products' FLOPs plus this many per gate value
# (batch x gates x hidden: the gates' activations, products and sums forward and backward, none of which
# the FLOPs count). Keyed by FLOPs alone, the profile's cells (batch 32-64, input half as wide as the state
# or as wide) priced a cell of more gate values per FLOP (a larger batch, a narrower input or state) short:
# over the saved version-11 generalise runs of two hosts, recurrent rows at batch <= 32 ran +4 to +22%,
# at 256 or more -15 to -30%, those fed a few features below those fed tokens. At 64 the AMD host's
# recurrent rows went from 82% to 90% within ±25% (median |error| 9.9% -> 7.5%), the Intel host's from
# 67% to 70% (18.8% -> 14.7%); 48-128 are within 3 points of it
# (bench/results/generalise_saved-runs_cell-gates/). Unmeasured on a GPU: its profiles keep FLOPs alone.
CELL_GATE_WORK = 64.0


# A CPU's convolution kernels (oneDNN) compute channels in blocks of 16 floats, on AVX2 as on AVX-512: a
# layer with 1 or 3 channels on one side pays for 16. Fitted on 18 channel pairs (1-64 each side) of a 3x3
# convolution on a 2-core EPYC (AVX2): read off the curve at FLOPs x the padding below, measured / predicted
# spread 1.8x, at FLOPs alone 6.0x; blocks of 8 spread 2.0x (bench/results/curves_amd-epyc-2c_channels/)
CPU_CHANNEL_BLOCK = 16


def channel_padding(
    args: Mapping[str, Any], block: int, *, transposed: bool, input_grad: bool = True
) -> float:
    """The work a convolution's kernels do per FLOP counted, its channels rounded up to `block`.

    Of forward + backward's three passes, a convolution's forward and weight gradient run blocks of its
    output channels and its input's gradient blocks of its input channels; a transposed convolution the other
    way round. A first layer (no input gradient) runs the first two. Grouped convolutions run other kernels
    (1: as counted)."""
    if block <= 1 or int(args.get("groups", 1)) != 1:
        return 1.0

    def padded(channels: int) -> float:
        return math.ceil(channels / block) * block / channels

    inputs, outputs = padded(int(args["in_channels"])), padded(int(args["out_channels"]))
    kernel, data = (inputs, outputs) if transposed else (outputs, inputs)
    passes = [kernel, kernel, data] if input_grad else [kernel, kernel]
    return sum(passes) / len(passes)


def layer_seconds(
    item: Layer, shape: Shape, batch: int, rates: ThreadProfile, input_grad: bool = True
) -> tuple[Shape, float, float]:
    """(output shape, compute seconds, other seconds) of one layer's forward + backward for a batch;
    `input_grad` False where the layer's input is data (nothing before it has parameters)."""
    kind, args = KINDS[item["kind"]], item["args"]
    if kind.cost == BRANCHES:
        return _branches_seconds(item, shape, batch, rates, input_grad)
    out, params, flops, _kept = kind.shape(args, shape)
    # a roofline: forward + backward move the input and output activations and the weights (read forward,
    # read for the input's gradient, the weight's gradient written), at the element-wise curve's rate, a
    # forward + backward too; a small batch through large weights is bound by this, not by its FLOPs
    values = batch * (math.prod(shape) + math.prod(out)) + params
    memory = interpolate(rates["elementwise"], values)
    # the profile's curves time forward + backward with the input's gradient (three products of the
    # forward's size); a first layer fed by data skips that one (two products)
    share = 1.0 if input_grad else NO_INPUT_GRAD_SHARE
    if kind.cost in (PRODUCT, CD1_PRODUCT):
        # a product's work on the curve: its FLOPs plus its weights' own cost, in FLOPs (packing and
        # streaming them whatever the batch: profile.ThreadProfile.product_weight_work)
        work = batch * flops + rates.get("product_weight_work", 0.0) * params
        # CD-1's products run without autograd: no autograd node's launch cost below the curve
        seconds = interpolate(rates["linear"], work, launch=kind.cost == PRODUCT)
        return out, max(share * seconds, memory), 0.0
    if kind.cost == CONVOLUTION:
        transposed = item["kind"] == "ConvTranspose2d"
        curve = (rates.get("conv_transpose") if transposed else None) or rates["conv"]
        padding = channel_padding(
            args, rates.get("channel_block", 1), transposed=transposed, input_grad=input_grad
        )
        return out, max(share * interpolate(curve, batch * flops * padding), memory), 0.0
    if kind.cost == TEMPORAL_CONVOLUTION:
        curve = rates.get("conv1d") or rates["conv"]
        return out, max(share * interpolate(curve, batch * flops), memory), 0.0
    if kind.cost in (GATED_CELL, PLAIN_CELL):
        # one cell per layer, direction and time step, each a few small kernels: the count matters more
        # than the FLOPs for small cells
        calls = args.get("num_layers", 1) * (2 if args.get("bidirectional") else 1)
        cells = shape[0] * calls
        cell_gates = GATES["LSTM"]  # of the cells the curve timed: an older profile's GRU reads the LSTM's
        if kind.cost == PLAIN_CELL:
            short, long = rates[PLAIN_CELL_CURVE], rates.get("rnn_long")
        elif item["kind"] == "GRU" and GRU_CURVE in rates:
            cell_gates = GATES["GRU"]
            # its own cells: a GRU step costs more than the LSTM curve gives for its FLOPs (more small
            # kernels a step; 1.3x the LSTM's time at 64 units for 0.75x the FLOPs)
            short, long = rates[GRU_CURVE], rates.get(GRU_LONG_CURVE)
        else:
            short, long = rates["recurrent"], rates.get("recurrent_long")
        work = batch * flops / max(1, cells)
        if long and not rates.get("sequence_line"):
            gated = None
            if kind.cost == GATED_CELL:
                gated = _gated_seconds(item, shape, batch, short, long, cell_gates)
            if gated is not None:
                return out, gated, 0.0
            return out, calls * _call_seconds(short, long, work, int(shape[0])), 0.0
        return out, _sequence_share(rates, int(shape[0])) * cells * interpolate(short, work), 0.0
    if kind.cost == POOLING and rates.get("pool"):
        # a max-pool on its own curve, at its input's values (what its forward reads and its backward
        # writes): on a CPU its forward (a maximum and an index per window) took 5-7x what two passes of the
        # activation curve gave; overlapping 3x3 windows cost less per window than 2x2 ones, more per input
        # value (bench/results/curves_amd-epyc-2c_pool/README.md); an older profile reads `touches` passes
        return out, 0.0, interpolate(rates["pool"], batch * math.prod(shape))
    if kind.cost == VIEW:  # no kernel worth counting
        return out, 0.0, 0.0
    if kind.cost == LOOKUP:
        # a look-up gathers steps x dim values forward and scatters them back; its gradient is dense, so
        # the whole table is written every step whatever the batch looked up (a bag's mean hides the
        # steps from its output shape, not from its work)
        looked = batch * shape[0] * int(args["embedding_dim"])
        table = int(args["num_embeddings"]) * int(args["embedding_dim"])
        return out, 0.0, interpolate(rates["elementwise"], looked) + interpolate(rates["elementwise"], table)
    values = batch * max(math.prod(shape), math.prod(out))
    return out, 0.0, kind.touches * interpolate(rates["elementwise"], values)


def _branches_seconds(
    item: Layer, shape: Shape, batch: int, rates: ThreadProfile, input_grad: bool
) -> tuple[Shape, float, float]:
    """Residual and Concat: their branches' seconds, and one element-wise pass to add or join them."""
    args = item["args"]
    if item["kind"] == "Residual":
        out, c1, o1 = network_seconds(args["body"], shape, batch, rates, input_grad)
        _, c2, o2 = network_seconds(args["shortcut"], shape, batch, rates, input_grad)
        return out, c1 + c2, o1 + o2 + interpolate(rates["elementwise"], batch * math.prod(out))
    parts = [network_seconds(branch, shape, batch, rates, input_grad) for branch in args["branches"]]
    out = (sum(p[0][0] for p in parts), *parts[0][0][1:])
    extra = interpolate(rates["elementwise"], batch * math.prod(out))
    return out, sum(p[1] for p in parts), sum(p[2] for p in parts) + extra


def _gate_keyed(curve: list[list[float]], gates: int) -> list[list[float]] | None:
    """A cell curve's points keyed by their work with CELL_GATE_WORK per gate value; None where they are not
    the cells of CELL_SIZES (a GPU's larger ones, a curve made some other way): those keep FLOPs alone."""
    if len(curve) != len(CELL_SIZES):
        return None
    keyed = []
    for (b, i, h), (flops, seconds) in zip(CELL_SIZES, curve, strict=True):
        if not math.isclose(flops, 2.0 * b * gates * h * (i + h), rel_tol=1e-9):
            return None
        keyed.append([flops + CELL_GATE_WORK * b * gates * h, seconds])
    return sorted(keyed)


def _gated_seconds(
    item: Layer,
    shape: Shape,
    batch: int,
    short: list[list[float]],
    long: list[list[float]],
    cell_gates: int,
) -> float | None:
    """An LSTM's or GRU's calls, each layer and direction one, at its own work: its products' FLOPs (its
    input as wide as the layer below's output) plus CELL_GATE_WORK per gate value; None where the curves'
    points are not keyed by CELL_SIZES."""
    keyed_short, keyed_long = _gate_keyed(short, cell_gates), _gate_keyed(long, cell_gates)
    if keyed_short is None or keyed_long is None:
        return None
    args = item["args"]
    gates, hidden = GATES[item["kind"]], int(args["hidden_size"])
    directions = 2 if args.get("bidirectional") else 1
    width, seconds = int(args["input_size"]), 0.0
    for _ in range(int(args.get("num_layers", 1))):
        work = 2.0 * batch * gates * hidden * (width + hidden) + CELL_GATE_WORK * batch * gates * hidden
        seconds += directions * _call_seconds(keyed_short, keyed_long, work, int(shape[0]))
        width = hidden * directions
    return seconds


def _call_seconds(short: list[list[float]], long: list[list[float]], work: float, steps: int) -> float:
    """One call of a recurrent layer over `steps` time steps of `work` FLOPs each: a fixed part (setting up
    the kernel, reordering the weights forward and backward, summing their gradients) plus a part per step,
    the line through the profile's calls of the same size at SEQUENCE_STEPS and CELL_STEPS steps. The 8-step
    cells alone, charged per step, priced the generated specs' LSTMs of 36-131 steps 20-65% high at one
    thread, the fixed part of a call spread over 8 steps instead of all of them
    (bench/results/generalise_amd-epyc-2c_build/README.md)."""
    a, b = SEQUENCE_STEPS * interpolate(short, work), CELL_STEPS * interpolate(long, work)  # whole calls
    per_step = max(0.0, (b - a) / (CELL_STEPS - SEQUENCE_STEPS))
    fixed = max(0.0, a - SEQUENCE_STEPS * per_step)
    return fixed + steps * per_step


def _sequence_share(rates: ThreadProfile, steps: int) -> float:
    """A time step's seconds in a sequence of `steps` over its seconds in the profile's 8-step cells. The
    profile times a small LSTM at 8 and 128 steps; a call costs a fixed part (launches, cuDNN's set-up) plus a
    part per step, the line through those two points. On an H100 the 128-step cell cost 1/15 of the 8-step
    one per step (the launches are most of a short call) and the exponent clamped at 0 charged a 200-step
    LSTM 15x over. A CPU's profile keeps the exponent: the line predicted the grid's LSTMs worse there
    (bench predict --from the three final quiet runs, bench/results/predict_amd-epyc-2c_final: median error
    17.8/22.9/17.7% rose to 18.6/29.9/22.2%; bench/results/cuda_h100-80gb-hbm3/README.md)."""
    points = rates.get("sequence_step_seconds")
    if not rates.get("sequence_line") or not points or len(points) != 2 or points[0] <= 0:
        return float(max(1.0, steps / SEQUENCE_STEPS) ** rates.get("sequence_exponent", 0.0))
    short, long = SEQUENCE_STEPS * points[0], LONG_SEQUENCE_STEPS * points[1]  # seconds of a whole call
    per_step = max(0.0, (long - short) / (LONG_SEQUENCE_STEPS - SEQUENCE_STEPS))
    fixed = max(0.0, short - SEQUENCE_STEPS * per_step)
    return (fixed / max(1, steps) + per_step) / points[0]


def network_seconds(
    layers: list[Layer], shape: Shape, batch: int, rates: ThreadProfile, input_grad: bool = True
) -> tuple[Shape, float, float]:
    """Forward + backward of `layers`; `input_grad` False where their input is data (no gradient wanted):
    up to the first layer with parameters nothing needs the gradient of its input."""
    compute = other = 0.0
    for item in layers:
        shape, c, o = layer_seconds(item, shape, batch, rates, input_grad)
        if not input_grad:  # only up to the first layer with parameters (recommend() stays under 2 ms)
            input_grad = parameter_tensors([item]) > 0
        compute += c
        other += o
    return shape, compute, other


def parameter_tensors(layers: list[Layer]) -> int:
    """Parameter tensors (weight and bias per layer with parameters) that an optimiser step walks over."""
    total = 0
    for item in layers:
        kind, args = KINDS[item["kind"]], item["args"]
        if item["kind"] == "Residual":
            total += parameter_tensors(args["body"]) + parameter_tensors(args["shortcut"])
        elif item["kind"] == "Concat":
            total += sum(parameter_tensors(b) for b in args["branches"])
        elif kind.cost in (GATED_CELL, PLAIN_CELL):  # per layer and direction
            total += kind.tensors * args.get("num_layers", 1) * (2 if args.get("bidirectional") else 1)
        else:
            total += kind.tensors
    return total
