"""recommend(spec): validate, choose, size, plan the hardware, estimate the data flow and the time."""

from __future__ import annotations

from typing import Any

from advisor.contract import Candidate, Estimate, HardwarePlan, Reason, Recommendation, TaskSpec
from advisor.engine import catalog, choice, plausibility
from advisor.engine.batching import Known, profiled_batch
from advisor.engine.budget import budget_reason
from advisor.engine.candidate import rebatch, to_candidate
from advisor.engine.costmodel import priced
from advisor.engine.dataflow import GB, GPU_USABLE, RAM_USABLE, dataflow, finish
from advisor.engine.estimate import (
    CATALOG_ERROR,
    assemble,
    device_for,
    layer_count,
    profiled_error,
    seconds_per_batch,
)
from advisor.engine.intervals import interval, profiled_ratios, ratios_for
from advisor.engine.learned import Correction
from advisor.engine.memory import memory_for
from advisor.engine.ordering import Timing, time_first
from advisor.engine.plan import gpu_memory_bytes, make_plan, profiled_threads
from advisor.engine.profile import DeviceProfile, thread_counts
from advisor.engine.rules import reason
from advisor.engine.sizing import oversize_reason, targets
from advisor.engine.spec import normalise
from advisor.engine.units import nbytes


def recommend(
    spec: Any,
    *,
    profile: DeviceProfile | None = None,
    device: str | None = None,
    correction: Correction | None = None,
) -> Recommendation:
    """The contract's Recommendation without `id`; raises SpecError for bad input. With the `profile` of
    `device` (a Device id), times on that kind of device come from the cost model (basis "profiled"), and
    with the device's learned `correction`, where it beat the profile on the device's measurements, from the
    corrected model (basis "predicted"). Every estimate has its 90% `interval` (engine.intervals)."""
    clean = normalise(spec)
    drafts, reasons = choice.drafts(clean)
    candidates = [to_candidate(draft, clean) for draft in drafts]
    for candidate in candidates:
        _fit_gpu(clean, candidate)
        warning = oversize_reason(candidate["parameters"], targets(clean))
        if warning is not None:
            candidate["reasons"].append(warning)
    contenders = [i for i, draft in enumerate(drafts) if draft.contends]
    if len(contenders) > 1:
        candidates, timed = time_first(
            candidates, contenders, _epoch_timing(clean, candidates, profile, device, correction), _on(clean)
        )
        reasons += timed
    first = candidates[0]
    layers = [layer_count(candidate["networks"]) for candidate in candidates]
    too_big = _exceeds_everything(clean, first)
    if too_big is not None:
        reasons.append(too_big)
        first["reasons"].append(too_big)
    plan = make_plan(
        clean,
        parameters=first["parameters"],
        memory_total=first["memory_bytes"]["total"],
        activations_bytes=first["memory_bytes"]["activations"],
        seconds_to_train=lambda trial: estimate_candidate(first, clean, trial, 0.0, layers=layers[0])[
            "seconds_to_train"
        ],
    )
    if profile is not None and _uses(profile, plan) and plan["parallelism"] == "none":
        _profiled_set_up(clean, plan, first, profile, device or profile["processor"])
    training_per_gpu = first["memory_bytes"]["total"] // max(
        1, plan["gpus"] if plan["parallelism"] == "model" else 1
    )
    flow = dataflow(clean, plan, training_per_gpu)
    for candidate, size in zip(candidates, layers, strict=True):
        candidate["estimate"] = estimate_candidate(
            candidate,
            clean,
            plan,
            flow["io_seconds_per_epoch"],
            layers=size,
            profile=profile,
            device=device,
            correction=correction,
        )
    finish(flow, first["estimate"]["compute_seconds_per_epoch"])
    missed = budget_reason(
        clean,
        plan,
        first,
        lambda s, p: estimate_candidate(first, s, p, 0.0, layers=layers[0])["seconds_to_train"],
    )
    if missed is not None:
        plan["reasons"].append(missed)
    result: Recommendation = {
        "spec": clean,
        "candidates": candidates,
        "hardware_plan": plan,
        "dataflow": flow,
        "reasons": reasons,
        "warnings": plausibility.warnings(clean, first, plan),
    }
    if profile is not None:
        # kept so that an estimate at another batch (measured.estimate_for) uses the same device's rates
        result["device_profile"] = {"device": device, **dict(profile)}
    return result


def _profiled_set_up(
    spec: TaskSpec, plan: HardwarePlan, first: Candidate, profile: DeviceProfile, device: str
) -> None:
    """Threads and the first candidate's batch from the device's profile (issue 15: chosen per network from
    the time model): threads at the rule's start batch, the batch at those threads, then the threads again
    at the chosen batch (a few step costs rather than every batch at every thread count: recommend() stays
    under 2 ms)."""
    on_cpu = plan["device"] == "cpu"
    known: Known = {}
    if on_cpu:
        profiled_threads(spec, plan, first, profile, device, known)
    if not any(r["rule"] == "batch.start" for r in first["reasons"]):  # the GPU's memory cut it: keep that
        return
    limit = RAM_USABLE * spec["hardware"]["ram_gb"] * GB if on_cpu else gpu_memory_bytes(spec) * GPU_USABLE
    start = first["training"]["batch_size"]
    threads = int(plan["threads"]) if on_cpu else 1
    profiled_batch(spec, plan, first, profile, device, memory_limit=limit, threads=threads, known=known)
    if on_cpu and first["training"]["batch_size"] != start:
        profiled_threads(spec, plan, first, profile, device, known)


def _epoch_timing(
    spec: TaskSpec,
    candidates: list[Candidate],
    profile: DeviceProfile | None,
    device: str | None,
    correction: Correction | None,
) -> Timing:
    """Seconds per epoch of a candidate as the recommendation will time it (net.time.first): under the plan
    the rules' first candidate gets, on a CPU at the thread count the profile predicts fastest for it."""
    rules_first = candidates[0]
    plan = make_plan(
        spec,
        parameters=rules_first["parameters"],
        memory_total=rules_first["memory_bytes"]["total"],
        activations_bytes=rules_first["memory_bytes"]["activations"],
        seconds_to_train=lambda trial: estimate_candidate(rules_first, spec, trial, 0.0)["seconds_to_train"],
    )
    profiled = profile is not None and _uses(profile, plan) and plan["parallelism"] == "none"
    counts = [int(plan["threads"])]
    if profiled and plan["device"] == "cpu" and profile is not None:
        counts = [t for t in thread_counts(profile) if t <= int(spec["hardware"]["cpu_cores"])] or counts

    def timing(candidate: Candidate) -> tuple[float, str]:
        best = min(
            (
                estimate_candidate(
                    candidate,
                    spec,
                    {**plan, "threads": threads},
                    0.0,
                    profile=profile,
                    device=device,
                    correction=correction,
                )
                for threads in counts
            ),
            key=lambda estimate: float(estimate["seconds_per_epoch"]),
        )
        return float(best["seconds_per_epoch"]), str(best["basis"])

    return timing


def _on(spec: TaskSpec) -> str:
    """The hardware a time is predicted for, in words."""
    hardware = spec["hardware"]
    if hardware["gpu"] is not None:
        return str(catalog.gpu(hardware["gpu"])["name"])
    cores = int(hardware["cpu_cores"])
    return f"your {cores} CPU core{'s' if cores > 1 else ''}"


def _uses(profile: DeviceProfile | None, plan: HardwarePlan) -> bool:
    """A profile speaks for the plan's device: a CPU profile for CPU training, a GPU's for one GPU."""
    if profile is None:
        return False
    return bool((profile["kind"] == "cpu") == (plan["device"] == "cpu"))


def data_parallel_devices(plan: HardwarePlan) -> int:
    if plan["parallelism"] == "data":
        return int(plan["gpus"] * plan["nodes"])
    return 1  # model or hybrid: every GPU holds a part of one replica, which runs at one GPU's pace


def estimate_candidate(
    candidate: Candidate,
    spec: TaskSpec,
    plan: HardwarePlan,
    io_seconds_per_epoch: float,
    batch_size: int | None = None,
    *,
    layers: int | None = None,
    profile: DeviceProfile | None = None,
    device: str | None = None,
    correction: Correction | None = None,
) -> Estimate:
    """The candidate's estimate under `plan` at `batch_size` (default: its training batch), before any
    measurement: from the device's learned correction where it beat the profile (basis "predicted"), else
    from the device's profile where it speaks for the plan's device ("profiled"), else from the catalog's
    peaks ("catalog")."""
    batch = batch_size or candidate["training"]["batch_size"]
    catalog_device = device_for(spec, plan)
    if profile is not None and _uses(profile, plan):
        threads = int(plan["threads"]) if plan["device"] == "cpu" else 1
        name = device or profile["processor"]
        if correction is not None and correction.used:
            per_batch = correction.seconds(candidate, batch, threads, profile)
            basis, error = "predicted", correction.expected_error
            ratios = correction.validation["ratio_low"], correction.validation["ratio_high"]
        else:  # no correction, or one that did not beat the profile on the device's measurements
            # a merged profile's members priced once: the price is their median, the interval their span
            cost, members = priced(candidate, batch_size=batch, threads=threads, profile=profile)
            per_batch = cost.seconds
            basis, error = "profiled", profiled_error(profile["kind"])
            ratios = profiled_ratios(per_batch, [m.seconds for m in members], plan["device"])
    else:
        per_batch = seconds_per_batch(
            family=candidate["family"],
            flops=candidate["flops_per_example"],
            parameters=candidate["parameters"],
            activations=candidate["activations_per_example"],
            layers=layer_count(candidate["networks"]) if layers is None else layers,
            batch_size=batch,
            device=catalog_device,
        )
        basis, error, name = "catalog", CATALOG_ERROR, catalog_device.name
        ratios = ratios_for("catalog", plan["device"])
    result = assemble(
        per_batch=per_batch,
        batch_size=batch,
        examples=spec["data"]["examples"],
        epochs=candidate["training"]["epochs"],
        devices=data_parallel_devices(plan),
        io_seconds_per_epoch=io_seconds_per_epoch,
        basis=basis,
    )
    result["expected_error"] = error
    result["interval"] = interval(result, ratios)
    if correction is not None and basis != "catalog":
        result["correction"] = correction.basis()  # which of profile and correction timed it, and why
    result["device"] = name
    return result


def _fit_gpu(spec: TaskSpec, candidate: Candidate) -> None:
    """Halve the mini-batch until training fits the GPU (gpu.memory); keep it if even 1 does not fit."""
    usable = gpu_memory_bytes(spec) * GPU_USABLE
    start = candidate["training"]["batch_size"]
    if usable <= 0 or candidate["memory_bytes"]["total"] <= usable:
        return
    batch = start
    while batch > 1 and candidate["memory_bytes"]["total"] > usable:
        batch //= 2
        rebatch(candidate, batch)
    if candidate["memory_bytes"]["total"] > usable:
        rebatch(candidate, start)
        return
    name = catalog.spec_gpu(spec["hardware"])["name"]
    # the memory, not the generic starting point, now sets the batch
    candidate["reasons"] = [r for r in candidate["reasons"] if r["rule"] != "batch.start"]
    candidate["reasons"].append(
        reason(
            "gpu.memory",
            f"At a mini-batch of {start} training would not fit the {name} ({nbytes(usable)} usable): "
            "the "
            f"batch is cut to {batch} ({nbytes(candidate['memory_bytes']['total'])}). A GPU with more "
            "memory would allow the larger batch.",
        )
    )


def _exceeds_everything(spec: TaskSpec, candidate: Candidate) -> Reason | None:
    """size.exceeds.memory: the first candidate's training state at batch 1 fits no catalogued GPU nor the "
    "RAM."""
    at_one = memory_for(candidate, batch_size=1)["total"]
    largest = catalog.largest_gpu_memory_gb() * GB * GPU_USABLE
    ram = spec["hardware"]["ram_gb"] * GB * RAM_USABLE
    if at_one <= max(largest, ram):
        return None
    return reason(
        "size.exceeds.memory",
        f"Even at a mini-batch of 1 this network needs about {nbytes(at_one)} to train: more than any "
        "GPU in "
        f"the catalog ({nbytes(largest / GPU_USABLE)}) and more than your {spec['hardware']['ram_gb']:g} "
        "GB of "
        "RAM. Make the input smaller (crop, downsample, select features) or split the model over many GPUs.",
    )
