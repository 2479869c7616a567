"""The processing-unit plan (W §III-E to §III-I, S §4-§6): CPU threads, GPU, several GPUs, nodes, sync."""

from __future__ import annotations

import math
from collections.abc import Callable

from advisor.contract import Candidate, Estimate, HardwarePlan, Reason, Recommendation, TaskSpec
from advisor.engine import batching, catalog
from advisor.engine.dataflow import GB, GPU_USABLE
from advisor.engine.intervals import ratio_text, ratios_for
from advisor.engine.profile import DeviceProfile, thread_counts
from advisor.engine.rules import reason
from advisor.engine.units import duration, nbytes, plural

SYNC_LIMIT = 40  # W §III-H-2: synchronous "until a large amount of over 40 GPUs"
MANY_NODES_PARAMETERS = 1_000_000  # above this, single-threaded CPU training is infeasible (W §III-F-1)
ALLOCATOR_BYTES = 64 * 2**20  # tensors this large go to mmap under glibc defaults


def gpu_memory_bytes(spec: TaskSpec) -> float:
    hardware = spec["hardware"]
    if hardware["gpu"] is None:
        return 0.0
    return float(hardware["gpu_memory_gb"] or catalog.gpu(hardware["gpu"])["memory_gb"]) * GB


def make_plan(
    spec: TaskSpec,
    *,
    parameters: int,
    memory_total: int,
    activations_bytes: int,
    seconds_to_train: Callable[[HardwarePlan], float],
) -> HardwarePlan:
    """The plan for the first candidate; `seconds_to_train(plan)` estimates it under a trial plan."""
    hardware = spec["hardware"]
    cores = hardware["cpu_cores"]
    plan: HardwarePlan = {
        "device": "cpu",
        "threads": cores,
        "threads_basis": "cores",  # "profiled": from the device's profile; "measured": from a calibration
        "gpus": 0,
        "nodes": 1,
        "parallelism": "none",
        "sync": "none",
        "reasons": [],
    }
    reasons = plan["reasons"]
    available = hardware["gpus_per_node"] * hardware["nodes"]
    per_gpu = gpu_memory_bytes(spec) * GPU_USABLE
    if hardware["gpu"] is not None and memory_total <= per_gpu:
        plan["device"], plan["gpus"] = "gpu", 1
        reasons.append(
            reason(
                "gpu.prefer",
                f"Training needs about {nbytes(memory_total)} (weights, gradients, optimiser state, one "
                f"mini-batch); your {catalog.gpu(hardware['gpu'])['name']} has {nbytes(per_gpu / GPU_USABLE)}"
                ": train on the GPU (Shi et al. measured up to 112x over a 4-core CPU).",
            )
        )
        _scale_for_budget(spec, plan, available, seconds_to_train)
        if catalog.gpu(hardware["gpu"])["tensor_cores"]:
            reasons.append(_mixed_precision(catalog.gpu(hardware["gpu"])))
    elif hardware["gpu"] is not None:
        _too_big_for_one_gpu(spec, plan, memory_total, per_gpu, available)
    if plan["device"] == "cpu":
        reasons.append(
            reason(
                "cpu.threads.physical",
                f"Train with {plural(cores, 'thread')}, one per physical core"
                + (
                    f", not {hardware['cpu_threads']} (hyper-threads slow training down)"
                    if hardware["cpu_threads"] > cores
                    else ""
                )
                + ".",
            )
        )
        if parameters >= MANY_NODES_PARAMETERS:
            reasons.append(
                reason(
                    "cpu.single.avoid",
                    f"{parameters:,} parameters: one thread would be far too slow; use all {cores} cores.",
                )
            )
        if activations_bytes >= ALLOCATOR_BYTES:
            reasons.append(reason("cpu.allocator"))
    if hardware["nodes"] > 1 and plan["nodes"] == 1:
        reasons.append(
            reason(
                "cluster.only.large",
                f"One node is enough for this task: spreading it over your {hardware['nodes']} nodes would "
                "cost more in communication than it saves.",
            )
        )
    return plan


def _scale_for_budget(
    spec: TaskSpec,
    plan: HardwarePlan,
    available: int,
    seconds_to_train: Callable[[HardwarePlan], float],
) -> None:
    budget = spec["target"]["time_budget_hours"]
    reasons = plan["reasons"]
    per_node = spec["hardware"]["gpus_per_node"]
    if budget is None or available <= 1:
        if available > 1:
            reasons.append(
                reason(
                    "multigpu.budget",
                    "One GPU is the plan; give a time budget and the advisor adds GPUs only "
                    "if one cannot meet it.",
                )
            )
        return
    one = seconds_to_train(plan)
    total = 1
    while seconds_to_train(_trial(plan, total, per_node)) > budget * 3600 and total < available:
        total = min(total * 2, available)
    if total == 1:
        reasons.append(
            reason(
                "multigpu.budget",
                f"One GPU meets your {budget:g} h budget (about {one / 3600:,.3g} h): more "
                "GPUs would add cost and communication for little gain.",
            )
        )
        return
    plan.update(_trial(plan, total, per_node))
    met = seconds_to_train(plan) <= budget * 3600
    reasons.append(
        reason(
            "multigpu.budget",
            f"One GPU needs about {duration(one)}, over your {budget:g} h budget: use {total} GPUs"
            + ("." if met else f", all you have, and still about {duration(seconds_to_train(plan))}."),
        )
    )
    reasons.append(reason("multigpu.gain"))
    reasons.append(reason("multigpu.data"))
    _sync(plan, reasons)


def _trial(plan: HardwarePlan, total: int, per_node: int) -> HardwarePlan:
    nodes = -(-total // per_node)
    gpus = min(total, per_node)
    parallelism = "data" if total > 1 else plan["parallelism"]
    return {**plan, "gpus": gpus, "nodes": nodes, "parallelism": parallelism}


def _sync(plan: HardwarePlan, reasons: list[Reason]) -> None:
    total = plan["gpus"] * plan["nodes"]
    if total <= 1:
        return
    if total > SYNC_LIMIT or (plan["nodes"] > 1 and plan["gpus"] > 1):
        plan["sync"] = "mixed"
        reasons.append(
            reason(
                "sync.mixed",
                f"{total} GPUs on {plan['nodes']} nodes: synchronous inside each node, "
                "asynchronous between nodes.",
            )
        )
    else:
        plan["sync"] = "sync"
        reasons.append(
            reason("sync.sync", f"{total} GPUs (40 or fewer): synchronous updates after every step.")
        )
    if plan["gpus"] > 1:
        reasons.append(reason("gpu.direct"))


def _too_big_for_one_gpu(
    spec: TaskSpec, plan: HardwarePlan, memory_total: int, per_gpu: float, available: int
) -> None:
    reasons = plan["reasons"]
    name = catalog.spec_gpu(spec["hardware"])["name"]
    if per_gpu * available >= memory_total:
        total = min(available, max(2, math.ceil(memory_total / per_gpu)))
        per_node = spec["hardware"]["gpus_per_node"]
        plan["device"], plan["gpus"], plan["nodes"] = "gpu", min(total, per_node), -(-total // per_node)
        plan["parallelism"] = "model" if plan["nodes"] == 1 else "hybrid"
        reasons.append(
            reason(
                "gpu.memory",
                f"Training needs about {nbytes(memory_total)}; one {name} holds {nbytes(per_gpu)} "
                f"usable: split the model over {total} GPUs.",
            )
        )
        reasons.append(reason("multigpu.model"))
        _sync(plan, reasons)
        return
    reasons.append(
        reason(
            "gpu.memory",
            f"Training needs about {nbytes(memory_total)} even at the smallest batch, more than your "
            f"{available} x {name} ({nbytes(per_gpu)} usable each): train on the CPU, choose a GPU with "
            f"more memory, or add {math.ceil(memory_total / per_gpu) - available} more GPUs for model "
            "parallelism.",
        )
    )


def _mixed_precision(entry: catalog.Gpu) -> Reason:
    return reason(
        "gpu.fp16",
        f"The {entry['name']} peaks at {entry['fp16_tflops']:g} TFLOPS in FP16 on its tensor cores against "
        f"{entry['fp32_tflops']:g} in FP32: train in mixed precision (torch.autocast). The estimates here "
        "assume FP32.",
    )


THREAD_RULES = ("cpu.threads.physical", "cpu.threads.profiled")


def profiled_threads(
    spec: TaskSpec,
    plan: HardwarePlan,
    first: Candidate,
    profile: DeviceProfile,
    device: str,
    known: batching.Known | None = None,
) -> None:
    """Threads from the device's profile (rule cpu.threads.profiled): the count the cost model predicts
    fastest for the first candidate, which for a small network is fewer than the cores (thread hand-offs cost
    more than they share)."""
    cores = int(spec["hardware"]["cpu_cores"])
    batch = int(first["training"]["batch_size"])
    times = {
        t: batching.step_seconds(first, batch, t, profile, known)
        for t in thread_counts(profile)
        if t <= cores
    }
    if not times:
        return
    best = min(times, key=times.__getitem__)
    plan["threads"], plan["threads_basis"] = best, "profiled"
    shown = ", ".join(f"{duration(seconds)} at {t}" for t, seconds in sorted(times.items()))
    text = (
        f"Train with {plural(best, 'thread')}: the profile of {device} predicts {shown} per "
        f"step at batch {batch} (profiled, 90% interval {ratio_text(ratios_for('profiled', 'cpu'))})"
        + (
            f" (fewer threads than your {cores} cores: this network is too small to share)."
            if best < cores
            else "."
        )
    )
    plan["reasons"] = [
        reason("cpu.threads.profiled", text) if r["rule"] in THREAD_RULES else r for r in plan["reasons"]
    ]


def follow_measurement(payload: Recommendation, measured: Estimate) -> Recommendation:
    """The recommendation after a calibration of its first candidate (rule plan.measured: a measurement
    outranks any model): where the thread count it measured fastest is not the plan's, the plan takes it;
    where the batch it measured best per example (`measured_at.best_batch`, batching.smallest_near_fastest)
    is not the first candidate's, the candidate takes it; each says why."""
    plan = payload["hardware_plan"]
    followed = payload.copy()
    first = batching.follow_batch(
        payload["candidates"][0], measured, device="cpu" if plan.get("device") == "cpu" else "cuda"
    )
    if first is not None:
        followed["candidates"] = [first, *payload["candidates"][1:]]
    at = measured.get("measured_at")
    threads = at.get("threads") if at else None
    if at is None or plan.get("device") != "cpu" or not threads or threads == plan.get("threads"):
        return followed
    job = measured.get("calibration")
    text = (
        f"Train with {plural(threads, 'thread')}: calibration #{job} measured that fastest "
        f"at batch {at.get('batch_size')}, where the plan had said {plan['threads']}."
    )
    reasons = [r for r in plan["reasons"] if r["rule"] not in THREAD_RULES]
    followed["hardware_plan"] = {
        **plan,
        "threads": threads,
        "threads_basis": "measured",
        "reasons": [*reasons, reason("plan.measured", text)],
    }
    return followed
