"""`profile_device()`: measure the rates the engine's cost model reads (advisor.engine.profile), with torch.

At each thread count from 1 to the physical cores (one count on CUDA), forward + backward of one layer of
each kind at several sizes (Linear, Conv2d, CausalConv1d, LSTM, GRU, RNN, an activation), one optimiser step
at several parameter counts and tensor counts, and the fixed cost of a step; the thread counts are measured
point by point, next to each other, so that they are compared under the same load. Each point is the median
of repeated runs after a warm-up (advisor/calibration/points.py times them); the whole profile takes 25-28 s
for 1 and 2 threads on a quiet 2-core VM (bench/results/predict_amd-epyc-2c_ab-point-length/README.md).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

import psutil
import torch
from torch import nn

from advisor.calibration.allocator import child_environment, current_allocator
from advisor.calibration.contention import Probe, judge
from advisor.calibration.devices import cpu_model_name, physical_cores
from advisor.calibration.floats import flush_denormals
from advisor.calibration.layers import CausalConv1d
from advisor.calibration.points import (
    DEADLINE,
    Interleaved,
    calls_per_sync,
    fwd_bwd,
    harness_step,
    median_seconds,
    optimizer_seconds,
    product_work,
    profile_scale,
    stage,
    weight_work,
)
from advisor.contract import LayerArgs
from advisor.engine import profile as curves
from advisor.engine.costmodel import with_factors
from advisor.engine.layercost import (
    CELL_STEPS,
    CPU_CHANNEL_BLOCK,
    LONG_SEQUENCE_STEPS,
    SEQUENCE_STEPS,
    channel_padding,
)
from advisor.engine.layers import KINDS
from advisor.engine.profile import PLAIN_CELL_CURVE, PROFILE_VERSION, DeviceProfile, ThreadProfile
from advisor.engine.wholesteps import WHOLE_STEPS, candidate
from advisor.engine.wholesteps import linear as linear_layer

# the whole steps set the factor that multiplies every prediction: five times a point's time (the factor
# was 1.07, 1.25 and 1.46 at 1 thread in three quiet profiles of one machine, minutes apart)
WHOLE_STEP_SECONDS = 0.75
# (batch, in, out): products from a tabular layer to a wide one
LINEAR_SIZES = ((64, 16, 16), (64, 64, 64), (64, 256, 128), (128, 512, 512), (256, 1024, 1024))
# the largest product's weights at a small batch: beside it, what the weights cost whatever the batch
# (product_weight_work). Forward + backward of a product cost about launch + c_w x weights + c_f x FLOPs,
# c_w as much as ~55 FLOPs (measured on 28 shapes from 8 x 64 x 64 to 256 x 3072 x 3072 on a 2-core EPYC;
# bench/results/generalise_amd-epyc-2c_build/README.md): at batch 16 a 3,072 x 4,608 product took twice
# what its FLOPs alone read off the curve said, the misses of weight-heavy FFNs and DBNs
THIN_LINEAR = (8, 1024, 1024)
# (batch, in channels, out channels, side): a first layer on MNIST to a CIFAR-sized middle layer
CONV_SIZES = ((32, 1, 8, 28), (32, 8, 16, 14), (32, 16, 32, 16), (32, 32, 64, 16), (32, 64, 64, 24))
# (batch, in channels, out channels, side, kernel, stride), padding 1: a decoder's transposed convolutions,
# from a 4x4 upsampling of a small map to an image-sized 3-channel output (read off the conv curve they ran
# 1.2-2x its time per padded FLOP; bench/results/curves_amd-epyc-2c_channels/README.md)
CONV_TRANSPOSE_SIZES = (
    (32, 128, 64, 7, 4, 2),
    (32, 64, 32, 8, 4, 2),
    (32, 32, 16, 14, 4, 2),
    (32, 32, 3, 28, 3, 1),
)
# (batch, channels in and out, steps, kernel, dilation) of a causal convolution over time steps, from a
# small temporal network's first layer to a wide, long one: the 2-D convolutions' curve priced the small
# ones 4-6x too high here (bench/results/curves_amd-epyc-2c/README.md)
CONV1D_SIZES = ((32, 8, 32, 3, 1), (32, 32, 64, 3, 2), (32, 64, 128, 3, 4), (32, 128, 256, 3, 8))
LSTM_SIZES = curves.CELL_SIZES  # (batch, input, hidden) of one layer; 8 and CELL_LONG_STEPS steps
LSTM_STEPS = SEQUENCE_STEPS
CELL_LONG_STEPS = CELL_STEPS  # the same cells again over more steps: a call's fixed part and per-step part
LONG_STEPS = LONG_SEQUENCE_STEPS  # the sequence over which per-step growth is measured
VALUES = (1_000, 30_000, 300_000, 3_000_000)
# (batch, channels, side) of a 2x2 max-pool's input: a small map's to a first stage's (2.1 M values read);
# on a CPU its forward took 5-7x two passes of the ReLU curve (bench/results/curves_amd-epyc-2c_pool/)
POOL_SIZES = ((16, 8, 8), (32, 8, 16), (32, 32, 24), (32, 64, 32))
# up to weights four times the last-level cache (12 M parameters: Adam's four tensors, 192 MB), where the
# optimiser streams from memory at each thread count instead of being extrapolated from 3 M
PARAMETERS = (1_000, 30_000, 300_000, 3_000_000, 12_000_000)
# A GPU's curves need points far larger than a CPU's to leave the launch-bound region: at the CPU's sizes an
# H100's largest product took 0.18 ms at 5e8 FLOPs (3 TFLOP/s), and everything beyond it was extrapolated at
# that rate, 10x slow (bench/results/cuda_h100-80gb-hbm3/README.md)
CUDA_LINEAR_SIZES = ((1024, 2048, 2048), (4096, 4096, 4096))
CUDA_CONV_SIZES = ((128, 64, 128, 32), (256, 128, 128, 32))
CUDA_CONV1D_SIZES = ((128, 256, 512, 3, 4), (256, 512, 1024, 3, 8))
CUDA_LSTM_SIZES = ((256, 512, 512), (1024, 1024, 1024))
CUDA_VALUES = (30_000_000, 300_000_000)
CUDA_PARAMETERS = (30_000_000,)


def _sequence_exponent(
    dev: torch.device, sync: Callable[[], None], repeat: int = 1
) -> tuple[float, list[float]]:
    """How per-step seconds of a small LSTM grow from LSTM_STEPS to LONG_STEPS time steps (the exponent,
    at least 0) and the two per-step seconds themselves, kept: the grid's long LSTMs measured about half the
    8-step point's per-step cost (bench/results/predict_amd-epyc-2c_quiet/README.md), which an exponent
    clamped at 0 cannot show."""
    b, i, h = 16, 16, 64
    lstm = nn.LSTM(i, h, batch_first=True).to(dev)
    short, long = (
        fwd_bwd(lstm, torch.rand(b, steps, i, device=dev, requires_grad=True), sync, repeat) / steps
        for steps in (LSTM_STEPS, LONG_STEPS)
    )
    exponent = min(1.5, max(0.0, math.log(long / short) / math.log(LONG_STEPS / LSTM_STEPS)))
    return exponent, [short, long]


def _at_threads(
    dev: torch.device, sync: Callable[[], None], counts: list[int], probe: Probe | None = None
) -> dict[str, ThreadProfile]:
    """Every point at every count in `counts`, interleaved (Interleaved); the rates per count."""
    cuda = dev.type == "cuda"
    r = calls_per_sync(dev)
    each = Interleaved(counts, cpu=not cuda, probe=probe)
    # a layer's share: forward + backward of it alone, less what the same with a layer of nothing costs
    x1 = torch.rand(4, 4, device=dev, requires_grad=True)
    lone, stack = nn.Linear(4, 4).to(dev), nn.Sequential(*(nn.Linear(4, 4) for _ in range(5))).to(dev)
    one = each(partial(fwd_bwd, lone, x1, sync, r))
    five = each(partial(fwd_bwd, stack, x1, sync, r))
    # the fixed cost of a whole step (zero_grad, loss, backward's launch, the optimiser's call), measured as
    # calibrations measure: the harness's step of tiny networks at depth 1 and 3, extrapolated to depth 0
    tiny = [
        each(partial(harness_step, candidate([linear_layer(4, 4)] * depth, [4], 4, "sgd"), dev, sync))
        for depth in (1, 3)
    ]
    # (size, seconds per count) of each kind of point; the per-count rates are assembled at the end
    linear, conv, conv1d, recurrent, simple, elementwise = [], [], [], [], [], []
    transposed: list[tuple[float, dict[int, float]]] = []
    # on a GPU no padding is modelled (cuDNN's kernels are not oneDNN's; unmeasured)
    block = 1 if cuda else CPU_CHANNEL_BLOCK
    recurrent_long, simple_long, gated, gated_long = [], [], [], []
    products = sorted((*LINEAR_SIZES, THIN_LINEAR), key=math.prod)
    for b, i, o in [*products, *(CUDA_LINEAR_SIZES if cuda else ())]:
        x, dense = torch.rand(b, i, device=dev, requires_grad=True), nn.Linear(i, o).to(dev)
        linear.append(((b, i, o), each(partial(fwd_bwd, dense, x, sync, r))))
    for b, ci, co, side in CONV_SIZES + (CUDA_CONV_SIZES if cuda else ()):
        x = torch.rand(b, ci, side, side, device=dev, requires_grad=True)
        kernel = nn.Conv2d(ci, co, 3, padding=1).to(dev)
        padding = channel_padding({"in_channels": ci, "out_channels": co}, block, transposed=False)
        work = 2.0 * b * co * side * side * ci * 9 * padding
        conv.append((work, each(partial(fwd_bwd, kernel, x, sync, r))))
    for b, ci, co, side, k, stride in () if cuda else CONV_TRANSPOSE_SIZES:
        x = torch.rand(b, ci, side, side, device=dev, requires_grad=True)
        args: LayerArgs = {
            "in_channels": ci,
            "out_channels": co,
            "kernel_size": k,
            "stride": stride,
            "padding": 1,
        }
        flops = KINDS["ConvTranspose2d"].shape(args, (ci, side, side))[2]
        work = b * flops * channel_padding(args, block, transposed=True)
        layer = nn.ConvTranspose2d(ci, co, k, stride=stride, padding=1).to(dev)
        transposed.append((work, each(partial(fwd_bwd, layer, x, sync, r))))
    for b, ch, steps, k, d in CONV1D_SIZES + (CUDA_CONV1D_SIZES if cuda else ()):
        x = torch.rand(b, steps, ch, device=dev, requires_grad=True)
        causal = CausalConv1d(ch, ch, k, d).to(dev)
        conv1d.append((2.0 * b * ch * steps * ch * k, each(partial(fwd_bwd, causal, x, sync, r))))
    for b, i, h in LSTM_SIZES + (CUDA_LSTM_SIZES if cuda else ()):
        x = torch.rand(b, LSTM_STEPS, i, device=dev, requires_grad=True)
        longer = torch.rand(b, CELL_LONG_STEPS, i, device=dev, requires_grad=True)
        lstm, rnn = nn.LSTM(i, h, batch_first=True).to(dev), nn.RNN(i, h, batch_first=True).to(dev)
        per_step = 2.0 * b * 4 * h * (i + h)
        recurrent.append((per_step, each(partial(fwd_bwd, lstm, x, sync, r))))
        recurrent_long.append((per_step, each(partial(fwd_bwd, lstm, longer, sync, r))))
        simple.append((per_step / 4, each(partial(fwd_bwd, rnn, x, sync, r))))
        simple_long.append((per_step / 4, each(partial(fwd_bwd, rnn, longer, sync, r))))
        gru = nn.GRU(i, h, batch_first=True).to(dev)  # three gates' products: 3/4 of the LSTM's FLOPs
        gated.append((per_step * 3 / 4, each(partial(fwd_bwd, gru, x, sync, r))))
        gated_long.append((per_step * 3 / 4, each(partial(fwd_bwd, gru, longer, sync, r))))
    pool = []
    for b, ch, side in POOL_SIZES:  # read by a max-pool at its input's values
        pool.append(
            (
                float(b * ch * side * side),
                each(partial(fwd_bwd, nn.MaxPool2d(2), stage(b, ch, side, dev), sync, r)),
            )
        )
    values = VALUES + (CUDA_VALUES if cuda else ())
    for n in values:
        x = torch.rand(n, device=dev, requires_grad=True)
        elementwise.append((float(n), each(partial(fwd_bwd, nn.ReLU(), x, sync, r))))
    optimizer: dict[str, list[tuple[float, dict[int, float]]]] = {}
    tensors: dict[str, tuple[dict[int, float], dict[int, float]]] = {}
    for name in ("sgd", "adam"):
        optimizer[name] = [
            (float(p), each(partial(optimizer_seconds, name, 2, p, dev, sync, r)))
            for p in PARAMETERS + (CUDA_PARAMETERS if cuda else ())
        ]
        tensors[name] = (
            each(partial(optimizer_seconds, name, 16, 16_000, dev, sync, r)),
            each(partial(optimizer_seconds, name, 2, 16_000, dev, sync, r)),
        )
    # the whole steps set the factors that multiply every prediction (costmodel.with_factors)
    whole_s = WHOLE_STEP_SECONDS * profile_scale()
    whole = [each(partial(harness_step, c, dev, sync, whole_s)) for c in WHOLE_STEPS]

    def at(count: int) -> ThreadProfile:
        base = max(one[count] - (five[count] - one[count]) / 4, one[count] * 0.1)
        low, high = tiny[0][count], tiny[1][count]

        def net(seconds: float) -> float:
            return max(seconds - base, seconds * 0.05)  # the layer's own share, without the step's fixed cost

        seconds = {shape: net(t[count]) for shape, t in linear}
        thick = LINEAR_SIZES[-1]
        # on a GPU these products are all launches: FLOPs alone
        kappa = 0.0 if cuda else weight_work(seconds[THIN_LINEAR], seconds[thick], THIN_LINEAR[0], thick[0])
        curve = sorted([product_work(shape, kappa), s] for shape, s in seconds.items())
        biggest = [2.0 * math.prod(linear[-1][0]), seconds[linear[-1][0]]]
        rates: ThreadProfile = {
            "linear": curve,
            "product_weight_work": kappa,
            # sorted: at its padded work a 1-channel point can outweigh a larger one
            "conv": sorted([size, net(t[count])] for size, t in conv),
            "channel_block": block,
            "conv1d": [[size, net(t[count])] for size, t in conv1d],
            "recurrent": [[size, net(t[count]) / LSTM_STEPS] for size, t in recurrent],
            PLAIN_CELL_CURVE: [[size, net(t[count]) / LSTM_STEPS] for size, t in simple],
            "recurrent_long": [[size, net(t[count]) / CELL_LONG_STEPS] for size, t in recurrent_long],
            "rnn_long": [[size, net(t[count]) / CELL_LONG_STEPS] for size, t in simple_long],
            curves.GRU_CURVE: [[size, net(t[count]) / LSTM_STEPS] for size, t in gated],
            curves.GRU_LONG_CURVE: [[size, net(t[count]) / CELL_LONG_STEPS] for size, t in gated_long],
            "elementwise": [[size, net(t[count])] for size, t in elementwise],
            "pool": [[size, net(t[count])] for size, t in pool],
            "optimizer": {name: [[p, t[count]] for p, t in points] for name, points in optimizer.items()},
            "optimizer_tensor_seconds": {
                name: max(0.0, (many[count] - few[count]) / 14) for name, (many, few) in tensors.items()
            },
            "step_seconds": max(low - (high - low) / 2, low * 0.1),
            "flops": 3 * biggest[0] / biggest[1],
            "bandwidth": 4 * 4 * values[-1] / net(elementwise[-1][1][count]),  # read + write, 2 reads + write
            "whole_step_seconds": [t[count] for t in whole],
        }
        if transposed:
            rates["conv_transpose"] = sorted([size, net(t[count])] for size, t in transposed)
        return with_factors(rates)

    return {str(count): at(count) for count in counts}


def _copy_bandwidth(dev: torch.device, sync: Callable[[], None]) -> float:
    host = torch.rand(16 * 2**20 // 4).pin_memory()

    def copy() -> None:
        host.to(dev, non_blocking=True)

    seconds = median_seconds(copy, sync)
    return host.numel() * 4 / seconds


def profile_device(
    device: str = "cpu", *, threads: list[int] | None = None, budget: float = math.inf
) -> DeviceProfile:
    """The device's profile; on a CPU at every thread count in `threads` (default 1..physical cores). Past
    `budget` seconds the remaining points are timed once each (DEADLINE) and the profile is unreliable."""
    dev = torch.device(device)
    started = time.perf_counter()
    deadline = DEADLINE.set(started + budget)
    if dev.type == "cuda":
        if dev.index is None:  # "cuda": the current GPU, as torch reads it (set_device needs an index)
            dev = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(dev)

        def sync() -> None:
            torch.cuda.synchronize(dev)

        counts = [1]
        processor = torch.cuda.get_device_name(dev)
    else:

        def sync() -> None:
            return None

        counts = threads or list(range(1, physical_cores() + 1))
        processor = cpu_model_name()
    previous = torch.get_num_threads()
    # the signals measure() judges a configuration by, over the whole profile: a profile taken while other
    # work ran is not trusted (a worker keeps its earlier ones, engine.profile.merge)
    probe = Probe(cuda_index=dev.index if dev.type == "cuda" else None)
    probe.start()
    try:
        by_threads = _at_threads(dev, sync, counts, probe)
        # measured once, at the first count: a property of the recurrent kernels' memory traffic
        if dev.type == "cpu":
            torch.set_num_threads(counts[0])
        exponent, per_step = _sequence_exponent(dev, sync, calls_per_sync(dev))
        for rates in by_threads.values():
            rates["sequence_exponent"] = exponent
            rates["sequence_step_seconds"] = per_step
            if dev.type == "cuda":
                rates["sequence_line"] = True
    finally:
        torch.set_num_threads(previous)
        DEADLINE.reset(deadline)
    elapsed = time.perf_counter() - started
    # CPU time over wall x threads means little across thread counts taken in turn: runnable tasks, steal,
    # the cgroup's throttling and the GPU's other processes say whether others ran
    contention = probe.finish(cpu_seconds=None, timed_seconds=elapsed, threads=max(counts))
    reasons = judge(contention, halfwidth=0.0, timed_seconds=elapsed, iterations=0)
    if elapsed > budget:
        reasons.append(
            {
                "code": "hurried",
                "text": f"the profile outlasted its {budget:.0f} s budget ({elapsed:.0f} s): the points "
                "after it were timed once each",
            }
        )
    return {
        "version": PROFILE_VERSION,
        "kind": dev.type,
        "processor": processor,
        "torch": torch.__version__,
        "threads": by_threads,
        "copy_bandwidth": _copy_bandwidth(dev, sync) if dev.type == "cuda" else None,
        "allocator": current_allocator(),
        "profiled_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": elapsed,
        "contention": contention,
        "unreliable_reasons": reasons,
    }


def profile_in_child(
    device: str = "cpu", *, threads: list[int] | None = None, allocator: str = "tuned", timeout: float = 120.0
) -> DeviceProfile:
    """profile_device() in a fresh process under the allocator set-up calibrations measure with (glibc reads
    its variables at start; under its defaults a 3 M-value activation ran 10x slower here, page faults).
    The child hurries after half of `timeout` (profile_device's `budget`), so a busy device still gives a
    profile, untrusted, in time; one that fails or outlasts `timeout` all the same is a RuntimeError: the
    worker logs it and keeps the catalog path, it does not stop."""
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "advisor.calibration.profile",
                "--device",
                device,
                "--budget",
                f"{timeout / 2}",
            ]
            + (["--threads", ",".join(map(str, threads))] if threads else []),
            env=child_environment(allocator),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=os.getcwd(),
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"profiling {device} took longer than {timeout:g} s") from exc
    if done.returncode != 0:
        raise RuntimeError(f"profiling {device} failed: {done.stderr.strip()[-2000:]}")
    profile: DeviceProfile = json.loads(done.stdout)
    return profile


if __name__ == "__main__":
    # this process's start to here: the interpreter, torch and the harness imported, as a calibration's
    # child imports them before its first configuration
    child_start = time.time() - psutil.Process().create_time()
    flush_denormals()  # as the calibrations' children time their steps (floats.py)
    args = sys.argv[1:]
    chosen = args[args.index("--device") + 1] if "--device" in args else "cpu"
    counts = [int(t) for t in args[args.index("--threads") + 1].split(",")] if "--threads" in args else None
    budget = float(args[args.index("--budget") + 1]) if "--budget" in args else math.inf
    json.dump(
        {**profile_device(chosen, threads=counts, budget=budget), "child_start_seconds": child_start},
        sys.stdout,
    )
