"""Data flow (W §II, §IV-B): dataset bytes, where the data lives, transfer and storage time per epoch.

Data goes storage -> host RAM -> (link) -> GPU. With prefetching, transfer overlaps computation, so a step
takes max(compute, transfer); the share of that time spent computing is the effective compute fraction.
W's worked example: three GTX 1080 (8 GB) refreshed over PCIe 4.0 x16 (31.5 GB/s) need 3 x 0.253968 s =
0.7619 s per iteration; with 0.5 s of computation the GPUs compute 0.5 / 0.7619 = 65.62% of the time.
"""

from __future__ import annotations

import math

from advisor.contract import Dataflow, HardwarePlan, Reason, TaskSpec
from advisor.engine import catalog
from advisor.engine.rules import reason
from advisor.engine.units import byte_rate, duration, nbytes, percent

GB = 1e9
RAM_USABLE = 0.75  # the OS, the framework and the model need the rest
GPU_USABLE = 0.9  # the CUDA context and allocator fragmentation take the rest
LARGE_EXAMPLE_VALUES = 512 * 512  # W §II: a 512x512 greyscale image = 262,144 inputs


def transfer_seconds(bytes_moved: float, gbps: float) -> float:
    """Time to move bytes over a link or from storage at its (best-case) bandwidth in GB/s."""
    return bytes_moved / (gbps * GB)


def effective_compute_fraction(compute_seconds: float, transfer_seconds: float) -> float:
    """Share of time the processing unit computes when transfer overlaps compute (prefetching)."""
    if compute_seconds <= 0.0:
        return 1.0 if transfer_seconds <= 0.0 else 0.0
    return compute_seconds / max(compute_seconds, transfer_seconds)


def input_values(shape: list[int]) -> int:
    """Inputs per example: W §II's 512x512 greyscale image gives 262,144."""
    return math.prod(shape)


def dataflow(spec: TaskSpec, plan: HardwarePlan, training_bytes_per_gpu: int) -> Dataflow:
    """Everything but the effective compute fraction, which needs the compute time (see finish())."""
    data, hardware = spec["data"], spec["hardware"]
    per_example = input_values(data["input_shape"]) * data["bytes_per_value"]
    dataset = data["examples"] * per_example
    nodes = plan["nodes"]
    per_node = dataset / nodes
    fits_ram = per_node <= hardware["ram_gb"] * GB * RAM_USABLE
    reasons: list[Reason] = []
    fits_gpu = False
    storage = catalog.storage(hardware["storage"])
    storage_seconds = 0.0 if fits_ram else transfer_seconds(per_node, storage["gbps"])
    if _resident(spec, plan, dataset, training_bytes_per_gpu):
        storage_seconds = 0.0  # read once, then resident on the GPUs: nothing crosses storage per epoch
    if not fits_ram and not _resident(spec, plan, dataset, training_bytes_per_gpu):
        reasons.append(
            reason(
                "data.ram",
                f"Your data ({nbytes(per_node)} per node) does not fit in {hardware['ram_gb']:g} GB of "
                f"RAM: it is read from the {storage['name']} ({byte_rate(storage['gbps'] * GB)}) every "
                f"epoch, {duration(storage_seconds)} per epoch. Prefetch, use a faster store (NVMe RAID 0 "
                "~17 GB/s) or keep the data on the nodes.",
            )
        )
    transfer = 0.0
    if plan["device"] == "gpu":
        shard = dataset / (plan["gpus"] * nodes)
        fits_gpu = _resident(spec, plan, dataset, training_bytes_per_gpu)
        link = catalog.link(hardware["link"])
        if fits_gpu:
            reasons.append(
                reason(
                    "data.gpu.fit",
                    f"Your data ({nbytes(shard)} per GPU) fits in GPU memory beside the model: load it "
                    "once and keep it there; no transfer per epoch.",
                )
            )
        else:
            # every byte of every epoch crosses the node's host link once, whichever GPU it feeds
            transfer = transfer_seconds(per_node, link["gbps"])
            reasons.append(
                reason(
                    "data.pcie",
                    f"Each epoch moves {nbytes(per_node)} per node over {link['name']} "
                    f"({byte_rate(link['gbps'] * GB)}): {duration(transfer)} of transfer per epoch, compared "
                    "with the compute time below.",
                )
            )
            reasons.append(reason("gpu.overlap"))
    if input_values(data["input_shape"]) >= LARGE_EXAMPLE_VALUES:
        reasons.append(
            reason(
                "data.example.size",
                f"Each example has {input_values(data['input_shape']):,} values ({nbytes(per_example)}): "
                "moving examples costs real time, most of all when the network does little work per value.",
            )
        )
    return {
        "dataset_bytes": dataset,
        "fits_in_ram": fits_ram,
        "fits_in_gpu": fits_gpu,
        "transfer_seconds_per_epoch": transfer,
        "storage_seconds_per_epoch": storage_seconds,
        "io_seconds_per_epoch": max(transfer, storage_seconds),  # the two stages pipeline
        "reasons": reasons,
    }


def _resident(spec: TaskSpec, plan: HardwarePlan, dataset: float, training_bytes_per_gpu: int) -> bool:
    """data.gpu.fit: each GPU's share of the data fits beside its training state."""
    hardware = spec["hardware"]
    if plan["device"] != "gpu":
        return False
    gpu_memory = (hardware["gpu_memory_gb"] or catalog.spec_gpu(hardware)["memory_gb"]) * GB
    shard = dataset / (plan["gpus"] * plan["nodes"])
    return bool(shard + training_bytes_per_gpu <= gpu_memory * GPU_USABLE)


def finish(flow: Dataflow, compute_seconds_per_epoch: float) -> None:
    io = flow["io_seconds_per_epoch"]
    fraction = effective_compute_fraction(compute_seconds_per_epoch, io)
    flow["effective_compute_fraction"] = fraction
    if io > 0.0 and fraction < 1.0:
        storage_bound = flow["storage_seconds_per_epoch"] >= flow["transfer_seconds_per_epoch"]
        flow["reasons"].append(
            reason(
                "data.ram" if storage_bound else "data.pcie",
                f"Data arrives slower than the first candidate computes ({duration(io)} vs "
                f"{duration(compute_seconds_per_epoch)} per epoch): the processing units compute only "
                f"{percent(fraction, 2)} of the time.",
            )
        )
