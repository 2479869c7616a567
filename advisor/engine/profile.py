"""A device profile: what one device achieves on the operations a training step is made of (plain data).

`advisor.calibration.profile` measures it with PyTorch; the engine only reads it, as an argument, so that the
cost model (advisor.engine.costmodel) needs neither Django nor torch. Every curve is a list of
[work, seconds] points, sorted by work, measured at several sizes: what a size achieves is read off the
curve (log-log interpolation), because a small product reaches a far smaller share of the peak than a large
one (here a 64x64x64 product runs at a tenth of the rate of a 512-wide one).
"""

from __future__ import annotations

import bisect
import math
import statistics
from typing import Final, NotRequired, TypedDict, cast

from advisor.contract import Contention, Unreliability

# 2: step_factor and sequence_exponent (a worker re-profiles a device whose stored profile is older)
# 3: whole_step_seconds, the factor from the MLP's step, a cost model with launch costs, first layers without
# their input's gradient, weights in a product's memory time and embeddings' dense gradients
# 4: a GPU's points pipelined and larger, the GPU's sequence line
# 5: the thread counts measured point by point, interleaved (same load for both), each point 2.5x longer
# (A/B on the same grids: bench/results/predict_amd-epyc-2c_ab-sequential-vs-interleaved/README.md and
# bench/results/predict_amd-epyc-2c_ab-point-length/README.md)
# 6: a curve of causal 1-D convolutions (CausalConv1d), which the 2-D convolutions' curve overpriced up to 6x
# (bench/results/curves_amd-epyc-2c/README.md)
# 7: the contention seen while profiling (an untrusted profile), a thin product beside the largest one (the
# weights' own cost: product_weight_work, the linear curve keyed by FLOPs plus it x weights), the optimisers
# at 12 M parameters, each recurrent cell's calls at 128 steps too (a call's fixed part and its part per step)
# (bench/results/generalise_amd-epyc-2c_build/README.md)
# 8: the GRU's cells measured as such (`gru`, `gru_long`): read off the LSTM's curve by FLOPs they were
# priced 44% low on the evaluation seed, every GRU row under
# (bench/results/generalise_amd-epyc-2c_evaluation/README.md)
# 9: a wide MLP's whole step (12-16 ms), which sets the factor: the 1 ms one's moved it 1.04-1.62 between
# quiet profiles (engine/wholesteps.py)
# 10: convolutions' work counts the channels their kernels pad to a vector block (`channel_block`: a 1- or
# 3-channel side cost 2-8x its FLOPs), and transposed convolutions have their own curve (`conv_transpose`):
# VAEs and deconvolutional networks ran 18-24% longer than estimated, their decoders' last layers 2-8x
# (bench/results/curves_amd-epyc-2c_channels/README.md)
# 11: max-pools have their own curve (`pool`): their forward took 5-7x the two activation passes they were
# priced at, and the generated CNNs ran 20-25% longer than estimated (bench/results/curves_amd-epyc-2c_pool/)
PROFILE_VERSION = 11
# the plain (tanh) RNN's curve, kept apart from the gated cells' (`recurrent`)
PLAIN_CELL_CURVE: Final = "rnn"
# the GRU's curves: a profile before version 8 has none and its GRUs read the LSTM's (`recurrent`)
GRU_CURVE: Final = "gru"
GRU_LONG_CURVE: Final = "gru_long"

# (batch, input, hidden) of the recurrent cells a CPU profile times, one layer each at 8 and 128 steps
# (calibration.profile; every version): what a cell curve's points are (layercost reads them by gate values)
CELL_SIZES: Final = ((32, 16, 32), (32, 64, 64), (32, 128, 128), (64, 256, 256))

# below a curve's smallest point, seconds shrink with the work down to this share of that point: a 1-channel
# convolution on 8x8 images measured 0.9 ms a step while the profile's smallest convolution (28x28) took 2 ms
BELOW_SMALLEST = 0.2


class ThreadProfile(TypedDict):
    """At one thread count; seconds exclude the fixed cost of a step (`step_seconds`)."""

    # [forward FLOPs of a batch plus product_weight_work x weights, seconds of forward + backward]
    linear: list[list[float]]
    conv: list[list[float]]  # same, for Conv2d, its FLOPs x layercost.channel_padding
    # same, for ConvTranspose2d (version >= 10; an older profile's conv curve stands in for it)
    conv_transpose: NotRequired[list[list[float]]]
    # the channels a convolution's kernels compute in blocks of (version >= 10 on a CPU; absent or 1: every
    # channel counted as it is)
    channel_block: NotRequired[int]
    # [values a max-pool's windows read for a batch, seconds of forward + backward] (version >= 11; an older
    # profile prices a max-pool at two passes of `elementwise`)
    pool: NotRequired[list[list[float]]]
    # same, for CausalConv1d (version >= 6; an older profile's conv curve stands in for it)
    conv1d: NotRequired[list[list[float]]]
    recurrent: list[list[float]]  # LSTM (GRU too): [forward FLOPs of one layer's time step of a batch,
    # seconds of its forward + backward]
    rnn: list[list[float]]  # the same for a plain (tanh) RNN
    # the same cells' calls over layercost.CELL_STEPS steps (version >= 7): with the 8-step ones, a call's
    # fixed part and its part per step, per size (layercost._call_seconds)
    recurrent_long: NotRequired[list[list[float]]]
    rnn_long: NotRequired[list[list[float]]]
    gru: NotRequired[list[list[float]]]  # the same for a GRU (version >= 8), at 8 and 128 steps
    gru_long: NotRequired[list[list[float]]]
    elementwise: list[list[float]]  # [values of a batch, seconds of forward + backward of one activation]
    optimizer: dict[str, list[list[float]]]  # "sgd" | "adam" -> [parameters, seconds of one step()]
    optimizer_tensor_seconds: dict[str, float]  # extra seconds per parameter tensor
    step_seconds: float  # zero_grad, loss, backward's launch, a small SGD step: a step with no layers
    # what a product's weights cost whatever the batch (packing, streaming them forward and backward, writing
    # their gradient), in forward FLOPs per weight: a product costs as much as batch x FLOPs + this x weights
    # would at the curve's rate (a thin product against a thick one of the same weights; version >= 7,
    # absent: 0, FLOPs alone)
    product_weight_work: NotRequired[float]
    flops: float  # the best FLOP/s any product reached (for display)
    bandwidth: float  # bytes/s of the largest element-wise operation (for display)
    # measured / layer-by-layer seconds of whole harness steps of small real networks: a real step redraws
    # its batch, runs the loss and the optimiser over every tensor and finds no weights in cache, which
    # isolated layers timed in a loop do not show (absent in older profiles: 1)
    step_factor: NotRequired[float]
    # the same from wholesteps.DECODER_FACTOR_STEPS (the CNN's step), which costmodel.factor_of mixes in
    decoder_step_factor: NotRequired[float]
    # the same from wholesteps.SMALL_STEP (the small MLP's step), and that step's modelled seconds
    # by today's model (no factor): where costmodel.factor_of starts to mix it in for small steps
    small_step_factor: NotRequired[float]
    small_step_modelled: NotRequired[float]
    # measured seconds of each of wholesteps.WHOLE_STEPS, from which the factor is derived (version >= 3)
    whole_step_seconds: NotRequired[list[float]]
    # per-time-step seconds of a recurrent layer grow as (steps / 8) ** this (cache misses over the state
    # kept for backward; absent in older profiles: 0, a constant per-step cost)
    sequence_exponent: NotRequired[float]
    # per-step seconds of that LSTM at 8 and at 128 steps (version >= 3)
    sequence_step_seconds: NotRequired[list[float]]
    # True (GPU profiles, version >= 4): a call costs a fixed part plus a part per step, the line through
    # those two points, instead of the exponent (layercost._sequence_share); on a CPU the line was worse
    sequence_line: NotRequired[bool]


class DeviceProfile(TypedDict):
    version: int
    kind: str  # "cpu" | "cuda"
    processor: str
    torch: str
    threads: dict[str, ThreadProfile]  # "1", "2", ... (CPU) or "1" (CUDA: threads do not matter)
    copy_bandwidth: float | None  # host -> device bytes/s (CUDA only)
    allocator: str  # the process's allocator set-up (calibration.allocator): "tuned" as calibrations run
    profiled_at: str  # ISO 8601, UTC
    seconds: float  # how long profiling took
    # what could be seen of other work on the device while it was profiled (calibration.contention), and
    # why that makes the profile untrusted ([]: trusted; version >= 7)
    contention: NotRequired[Contention | None]
    unreliable_reasons: NotRequired[list[Unreliability]]
    # how many trusted profiles this one is the median of (merge; absent: one)
    merged: NotRequired[int]
    # those profiles themselves, where there are two or more (merge): a step costs the median of their
    # prices (costmodel.step_cost), and its interval spans them (engine.intervals.profiled_ratios)
    members: NotRequired[list[DeviceProfile]]
    # seconds from the profiling child's start to its imports done (the interpreter, torch, the harness):
    # what a calibration's child pays before its first configuration, where the device has no finished
    # calibration to say (advisor.forecasts.startup_seconds)
    child_start_seconds: NotRequired[float]


def interpolate(curve: list[list[float]], work: float, *, launch: bool = True) -> float:
    """Seconds for `work` on a measured curve: log-log between the points; beyond the largest point at the
    largest point's rate; below the smallest in proportion, down to the launch cost the curve shows
    (`launch` False: down to BELOW_SMALLEST of the smallest point, for kernels called without autograd)."""
    if work <= 0 or not curve:
        return 0.0
    xs = [p[0] for p in curve]
    if work <= xs[0]:
        # smaller work in proportion, down to the fixed cost of launching the kernels: where seconds grow
        # with the work between the two smallest points, the line through them at no work (a product of
        # 16 x 16 and one of 256 x 128 differ by 30 us here, both above 60 us: the launch is the cost)
        floor = curve[0][1] * BELOW_SMALLEST
        if launch and len(curve) > 1 and curve[1][1] > curve[0][1]:
            slope = (curve[1][1] - curve[0][1]) / (xs[1] - xs[0])
            floor = max(floor, curve[0][1] - slope * xs[0])
        return max(curve[0][1] * work / xs[0], floor)
    if work >= xs[-1]:
        x1, y1 = curve[-1]
        return y1 * work / x1
    i = bisect.bisect_left(xs, work)
    (x0, y0), (x1, y1) = curve[i - 1], curve[i]
    t = (math.log(work) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))


def thread_counts(profile: DeviceProfile) -> list[int]:
    return sorted(int(t) for t in profile["threads"])


def at_threads(profile: DeviceProfile, threads: int) -> ThreadProfile:
    """The profile at `threads`, or at the nearest profiled count (more threads than profiled: the most)."""
    counts = thread_counts(profile)
    best = min(counts, key=lambda t: (abs(t - threads), -t))
    return profile["threads"][str(best)]


def is_current(profile: object, *, torch_version: str, processor: str) -> bool:
    """A stored profile still describes this device: same format, same torch, same processor."""
    return (
        isinstance(profile, dict)
        and profile.get("version") == PROFILE_VERSION
        and profile.get("torch") == torch_version
        and profile.get("processor") == processor
        and bool(profile.get("threads"))
    )


def trusted(profile: DeviceProfile) -> bool:
    """No contention seen while it was profiled (a profile without the signals, older than version 7, is
    trusted as before)."""
    return not profile.get("unreliable_reasons")


def _median_of(values: list[object]) -> object:
    """The pointwise median of the same field of several profiles (the last one's shape decides): a curve's
    seconds point by point where every profile measured the same works, numbers, lists, dicts by key."""
    last = values[-1]
    if isinstance(last, bool | str):
        return last
    if isinstance(last, int | float):
        return statistics.median(float(v) for v in values if isinstance(v, int | float))
    if isinstance(last, list):
        lists = [v for v in values if isinstance(v, list) and len(v) == len(last)]
        if last and isinstance(last[0], list):  # a curve: [[work, seconds], ...]
            works = [p[0] for p in last]
            lists = [v for v in lists if [p[0] for p in v] == works]
            return [[w, statistics.median(float(v[i][1]) for v in lists)] for i, w in enumerate(works)]
        return [_median_of([v[i] for v in lists]) for i in range(len(last))]
    if isinstance(last, dict):
        dicts = [v for v in values if isinstance(v, dict)]
        return {k: _median_of([d[k] for d in dicts if k in d]) for k in last}
    return last


def merge(profiles: list[DeviceProfile]) -> DeviceProfile:
    """One profile from several of the same device, oldest first: each point the median of that point over
    the profiles of the newest one's version, torch and processor. A single profile's thread points moved by
    tens of percent from one profiling to the next on a shared 2-core VM, and the 2-thread estimates with
    them (bench/results/generalise_amd-epyc-2c_build/README.md); the median of several taken apart does not
    rest on one moment's load. The newest profile's other fields are kept; `merged` counts the profiles and
    `members` keeps them (without their own members), so that an estimate can say how far they disagree."""
    newest = profiles[-1]
    same = [
        p
        for p in profiles
        if (p["version"], p["kind"], p["processor"], p["torch"])
        == (newest["version"], newest["kind"], newest["processor"], newest["torch"])
    ]
    if len(same) == 1:
        return cast(DeviceProfile, {**_without_members(newest), "merged": 1})
    threads: dict[str, ThreadProfile] = {}
    for count, rates in newest["threads"].items():
        each = [p["threads"][count] for p in same if count in p["threads"]]
        merged = _median_of(list[object](each))
        if not isinstance(merged, dict):
            threads[count] = rates
            continue
        threads[count] = cast(ThreadProfile, merged)
        # The linear curve's works count each product's weights at its own profile's `product_weight_work`,
        # so no two profiles share them and the pointwise median kept the newest one's curve, read with the
        # median weight work: one profile's noisy small points set every linear layer (a merged estimate
        # 40% over, though each profile alone was within 16%; bench/results/
        # generalise_amd-epyc-2c_evaluation-3/README.md). The curve and its weight work go together, from
        # the profile whose weight work is the median.
        if all("product_weight_work" in r for r in each):
            middle = sorted(each, key=lambda r: r["product_weight_work"])[(len(each) - 1) // 2]
            threads[count]["linear"] = middle["linear"]
            threads[count]["product_weight_work"] = middle["product_weight_work"]
    members: list[DeviceProfile] = [cast(DeviceProfile, _without_members(p)) for p in same]
    return {**newest, "threads": threads, "merged": len(same), "members": members}


def _without_members(profile: DeviceProfile) -> dict[str, object]:
    return {k: v for k, v in profile.items() if k != "members"}
