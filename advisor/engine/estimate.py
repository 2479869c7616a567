"""Catalog time estimates (basis "catalog") from FLOPs, bytes and the catalog's peaks, for hardware without a
device profile (advisor.engine.costmodel has the profiled path).

seconds per batch = max(compute, memory traffic) + framework overhead, where
- compute = training FLOPs (3 x forward: the backward pass costs about twice the forward; a GAN step runs
  both networks twice) x batch / (peak FP32 FLOP/s x EFFICIENCY);
- memory traffic = (16 bytes per parameter: weights read twice, gradient written, optimiser state read and
  written; 8 bytes per kept activation: written forward, read backward) / memory bandwidth;
- overhead = STEP_SECONDS per step (loss, zero_grad, optimiser call) + LAYER_SECONDS per layer (its forward,
  backward and update ops, each dispatched by PyTorch's eager mode at some 5-10 us). Measured here (tiny FFN,
  batch 64, 1 thread, on this project's shared 2-core VM under load): 0.64 ms per step with 3 layers, 0.94 ms
  with 7, i.e. ~75 us per layer and ~0.4 ms per step under load; a quiet machine needs about half.
EFFICIENCY is the share of peak that real frameworks reach on these networks: Shi et al. 2016 Table 4, best
tool per network at its Table 4 batch, gives 30-64% of peak on the GTX 1080 (FCN-5 30%, ResNet-50 52%,
AlexNet 64%, LSTM-32 45%) and 22-42% of the i7-3820's AVX peak at 4 threads; we use 45% (GPU) and 35% (CPU).
Several GPUs under data parallelism: each doubling cuts the time by MULTI_GPU_CUT (W §III-H: 35% at best,
28% Caffe, 10% Torch/TensorFlow in S's runs), unless a data-parallel calibration measured the scaling
efficiency E(n) (throughput of n ranks over n times one rank's): then the time is one device's / (n x E(n)),
with E interpolated in log2(n) between the measured world sizes (measured.with_measured_scaling).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TypedDict

from advisor.contract import Estimate, HardwarePlan, Layer, Scaling, TaskSpec
from advisor.engine import catalog, families

EFFICIENCY = {"gpu": 0.45, "cpu": 0.35}
# The host's share of a step: on a GPU, eager PyTorch's Python and kernel launches for the step and for each
# layer, fitted to 60 measured steps of the bench predict grid on an H100 SXM (all 1.1 to 7 ms, whatever
# the FLOPs; the old 100 + 30 us per layer put them 82% low; bench/results/cuda_h100-80gb-hbm3/README.md)
STEP_SECONDS = {"gpu": 900e-6, "cpu": 150e-6}
LAYER_SECONDS = {"gpu": 100e-6, "cpu": 40e-6}
MULTI_GPU_CUT = 0.35
# The relative error band each basis's validation supports, the 90th percentile |error|
# (bench/results/predict_amd-epyc-2c_quiet/README.md): the catalog path was 0.32x to 2.4x of measured on
# this project's CPU
# (issue 12; the quiet runs do not time the catalog path on a CPU, so it stays).
# Profiled: three quiet runs of the 120-configuration grid on the AMD 2-core VM, each row against its own
# run's profile: 51% with the profiles' stored step factor, 56% with the factor a fresh profile derives under
# today's model (85% before, from loaded runs).
PROFILED_ERROR = 0.55
# A GPU's profile: three profiles of one H100, minutes apart, predicted the same 60 measured steps with median
# errors of 21.7%, 46.7% and 31.4%; the 90th percentile over every run's rows is 75%, as PROFILED_ERROR is
# over the CPU's (bench/results/predict_h100-80gb-hbm3/README.md): its small points time the
# host's Python and launches, which varied up to 6x between profiles
PROFILED_ERROR_GPU = 0.75
CATALOG_ERROR = 1.4
# Measured: the same configuration measured again minutes later (the mean of the two other quiet runs
# predicting the third) was within 37% for 90% of the grid; the mean step against a real epoch in the same
# process (bench epoch) within 16%. A figure measured once predicts a later run no better than the first.
MEASURED_ERROR = 0.37
CPU_CORE = "generic-avx2"
CPU_BANDWIDTH_PER_CORE_GBPS = 10.0
CPU_BANDWIDTH_MAX_GBPS = 100.0


@dataclass(frozen=True)
class CatalogDevice:
    """The plan's hardware as the catalog's peak figures describe it (basis "catalog"); a worker's device is
    advisor.models.Device."""

    kind: str  # "cpu" or "gpu"
    name: str
    peak_flops: float  # FP32 FLOP/s of one device
    bandwidth: float  # bytes/s of one device's memory
    count: int  # devices working together (data parallel)
    memory_bytes: float  # of one device


def device_for(spec: TaskSpec, plan: HardwarePlan) -> CatalogDevice:
    hardware = spec["hardware"]
    if plan["device"] == "gpu":
        entry = catalog.spec_gpu(hardware)
        memory_gb = hardware["gpu_memory_gb"] or entry["memory_gb"]
        return CatalogDevice(
            "gpu",
            entry["name"],
            entry["fp32_tflops"] * 1e12,
            entry["memory_bandwidth_gbps"] * 1e9,
            plan["gpus"] * plan["nodes"],
            memory_gb * 1e9,
        )
    core = catalog.cpu(CPU_CORE)
    threads = plan["threads"]
    return CatalogDevice(
        "cpu",
        f"{threads} CPU cores",
        threads * core["ghz"] * 1e9 * core["fp32_flops_per_cycle_per_core"],
        min(threads * CPU_BANDWIDTH_PER_CORE_GBPS, CPU_BANDWIDTH_MAX_GBPS) * 1e9,
        1,
        hardware["ram_gb"] * 1e9,
    )


def layer_count(networks: dict[str, list[Layer]]) -> int:
    return sum(_layers(layers) for layers in networks.values())


def _layers(layers: list[Layer]) -> int:
    total = 0
    for item in layers:
        args = item["args"]
        if item["kind"] == "Residual":
            total += _layers(args["body"]) + _layers(args["shortcut"])
        elif item["kind"] == "Concat":
            total += sum(_layers(branch) for branch in args["branches"])
        else:
            total += 1
    return total


def seconds_per_batch(
    *,
    family: str,
    flops: int,
    parameters: int,
    activations: int,
    layers: int,
    batch_size: int,
    device: CatalogDevice,
) -> float:
    train_flops = families.get(family).step.train_flops * flops * batch_size
    compute = train_flops / (device.peak_flops * EFFICIENCY[device.kind])
    traffic = (16 * parameters + 8 * activations * batch_size) / device.bandwidth
    host = STEP_SECONDS[device.kind] + layers * LAYER_SECONDS[device.kind]
    if device.kind == "gpu":  # the host queues kernels ahead of the device: the longer of the two
        return max(compute, traffic, host)
    return max(compute, traffic) + host


CONSTANT_SCALING = "W §III-H constant"


def multi_gpu_factor(devices: int, efficiency: float | None = None) -> float:
    """Time on `devices` data-parallel devices over time on one: from a measured scaling efficiency, else
    the constant cut per doubling."""
    if devices <= 1:
        return 1.0
    if efficiency is not None:
        return 1.0 / (devices * efficiency)
    return float((1.0 - MULTI_GPU_CUT) ** math.log2(devices))


class WorldFigures(TypedDict):
    """What the engine reads of a data-parallel calibration's row (calibration.scaling.ScalingRow has it)."""

    world_size: int
    efficiency: float  # throughput over world_size times the smallest world's per rank


def scaling_efficiency(rows: list[WorldFigures], devices: int) -> tuple[float, bool] | None:
    """(E(devices), extrapolated) from a data-parallel calibration's rows (world_size, efficiency against
    world size 1), or None when they cannot say: no world size 1 row, or nothing beyond it. Between measured
    world sizes E is linear in log2(n); past the largest, its measured loss per doubling carries on
    (E(n) = E(max) ** (log2 n / log2 max)). Never above 1: a superlinear measurement (caches, noise) is not
    promised to a larger world."""
    usable = [r for r in rows if float(r.get("efficiency") or 0) > 0]
    points = sorted({int(r["world_size"]): float(r["efficiency"]) for r in usable}.items())
    if len(points) < 2 or points[0][0] != 1:
        return None
    x = math.log2(devices)
    largest, at_largest = points[-1]
    if devices >= largest:
        value, extrapolated = float(at_largest ** (x / math.log2(largest))), devices > largest
    else:
        (w0, e0), (w1, e1) = next((a, b) for a, b in itertools.pairwise(points) if b[0] >= devices)
        t = (x - math.log2(w0)) / (math.log2(w1) - math.log2(w0))
        value, extrapolated = e0 + t * (e1 - e0), False
    return min(1.0, value), extrapolated


def constant_scaling(devices: int) -> Scaling:
    """The basis of a multi-device figure no calibration measured."""
    return {
        "basis": CONSTANT_SCALING,
        "cut_per_doubling": MULTI_GPU_CUT,
        "efficiency": 1.0 / (devices * multi_gpu_factor(devices)),
    }


def assemble(
    *,
    per_batch: float,
    batch_size: int,
    examples: int,
    epochs: int,
    devices: int,
    io_seconds_per_epoch: float,
    basis: str,
    scaling: Scaling | None = None,
) -> Estimate:
    """An estimate from seconds per batch on one device; the data stall is what prefetching cannot hide.
    On several devices, `scaling` (a measured one: basis, efficiency, calibration...) or the constant's
    says how the time was divided, and goes into the estimate as its `scaling`."""
    batches = math.ceil(examples / batch_size)
    if devices > 1 and scaling is None:
        scaling = constant_scaling(devices)
    measured = devices > 1 and scaling is not None and scaling["basis"] != CONSTANT_SCALING
    efficiency = float(scaling["efficiency"]) if measured and scaling is not None else None
    compute = per_batch * batches * multi_gpu_factor(devices, efficiency)
    stall = max(0.0, io_seconds_per_epoch - compute)
    per_epoch = compute + stall
    estimate: Estimate = {
        "seconds_per_batch": per_batch,
        "seconds_per_epoch": per_epoch,
        "seconds_to_train": per_epoch * epochs,
        "basis": basis,
        "batch_size": batch_size,
        "batches_per_epoch": batches,
        "devices": devices,
        "compute_seconds_per_epoch": compute,
        "data_seconds_per_epoch": stall,
    }
    if devices > 1 and scaling is not None:
        estimate["scaling"] = scaling
    return estimate


def profiled_error(kind: str) -> float:
    """The error band of a profiled estimate on a device of this profile kind ("cpu" | "cuda")."""
    return PROFILED_ERROR_GPU if kind == "cuda" else PROFILED_ERROR
