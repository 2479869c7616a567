"""Estimates rebuilt after the fact: at another batch size (catalog, profiled or predicted), from a measured
seconds per batch, or over several devices with a measured scaling efficiency."""

from __future__ import annotations

from typing import TypedDict, cast

from advisor.contract import Candidate, Estimate, Recommendation, Scaling
from advisor.engine.estimate import MEASURED_ERROR, WorldFigures, assemble, scaling_efficiency
from advisor.engine.intervals import interval, ratios_for, with_interval
from advisor.engine.profile import DeviceProfile
from advisor.engine.recommend import data_parallel_devices, estimate_candidate


def _candidate(recommendation: Recommendation, candidate_index: int) -> Candidate:
    candidates = recommendation["candidates"]
    if not 0 <= candidate_index < len(candidates):
        raise IndexError(f"candidate {candidate_index} does not exist (0..{len(candidates) - 1})")
    return candidates[candidate_index]


def _check_batch(batch_size: int) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a whole number >= 1, not {batch_size!r}")


def estimate_for(recommendation: Recommendation, candidate_index: int, *, batch_size: int) -> Estimate:
    """The candidate's estimate at another mini-batch size, under the recommendation's plan and from the
    same device profile when it had one."""
    _check_batch(batch_size)
    candidate = _candidate(recommendation, candidate_index)
    io = recommendation["dataflow"].get("io_seconds_per_epoch", 0.0)
    stored = recommendation.get("device_profile")
    profile = None
    if stored:  # stored as JSON: the DeviceProfile's keys and the device's id
        profile = cast(DeviceProfile, {k: v for k, v in stored.items() if k != "device"})
    return estimate_candidate(
        candidate,
        recommendation["spec"],
        recommendation["hardware_plan"],
        io,
        batch_size,
        profile=profile,
        device=stored.get("device") if stored else None,
    )


def measured_estimate(
    recommendation: Recommendation, candidate_index: int, *, seconds_per_batch: float, batch_size: int
) -> Estimate:
    """seconds_per_epoch = measured seconds per batch x ceil(examples / batch) (scaled for data-parallel GPUs)
    plus the data-flow stall the engine estimates at that compute time; seconds_to_train = x epochs."""
    _check_batch(batch_size)
    if not isinstance(seconds_per_batch, int | float) or not seconds_per_batch > 0:
        raise ValueError(f"seconds_per_batch must be a positive number, not {seconds_per_batch!r}")
    candidate = _candidate(recommendation, candidate_index)
    analytic_estimate = estimate_for(recommendation, candidate_index, batch_size=batch_size)
    result = assemble(
        per_batch=float(seconds_per_batch),
        batch_size=batch_size,
        examples=recommendation["spec"]["data"]["examples"],
        epochs=candidate["training"]["epochs"],
        devices=data_parallel_devices(recommendation["hardware_plan"]),
        io_seconds_per_epoch=recommendation["dataflow"].get("io_seconds_per_epoch", 0.0),
        basis="measured",
    )
    result["expected_error"] = MEASURED_ERROR
    result["interval"] = interval(result, ratios_for("measured", recommendation["hardware_plan"]["device"]))
    result["analytic"] = analytic_estimate
    predicted = analytic_estimate["seconds_per_batch"]
    result["error_vs_analytic"] = (predicted - seconds_per_batch) / seconds_per_batch
    return result


# The device kind (Device.kind) whose data-parallel calibrations speak for a plan's device.
_KIND_FOR_PLAN = {"gpu": "cuda", "cpu": "cpu"}


class DataParallelRun(TypedDict):
    """A finished data-parallel calibration of a candidate, as with_measured_scaling reads it."""

    calibration: int  # the job's id
    device: str  # its device's id
    kind: str  # "cpu" or "cuda"
    rows: list[WorldFigures]  # its summary's data_parallel rows


def with_measured_scaling(
    recommendation: Recommendation,
    candidate_index: int,
    estimate: Estimate,
    calibrations: list[DataParallelRun],
) -> Estimate:
    """The estimate over the plan's data-parallel devices timed with a measured scaling efficiency instead
    of the constant (estimate.MULTI_GPU_CUT): from the newest of `calibrations` (oldest first; each
    {"calibration": job id, "device": its device id, "kind": "cpu" | "cuda", "rows": its summary's
    data_parallel rows}) on the plan's kind of device whose rows say something (world size 1 and a larger
    one). The estimate comes back unchanged on one device or when none does."""
    devices = int(estimate.get("devices") or 1)
    kind = _KIND_FOR_PLAN.get(str(recommendation["hardware_plan"].get("device")))
    if devices <= 1 or not estimate.get("batch_size"):
        return estimate
    for found in reversed(calibrations):
        measured = scaling_efficiency(list(found["rows"]), devices) if found["kind"] == kind else None
        if measured is None:
            continue
        efficiency, extrapolated = measured
        scaling: Scaling = {
            "basis": "measured",
            "efficiency": efficiency,
            "extrapolated": extrapolated,
            "calibration": found["calibration"],
            "device": found["device"],
            "world_sizes": sorted(int(r["world_size"]) for r in found["rows"]),
        }
        rescaled = assemble(
            per_batch=float(estimate["seconds_per_batch"]),
            batch_size=int(estimate["batch_size"]),
            examples=recommendation["spec"]["data"]["examples"],
            epochs=_candidate(recommendation, candidate_index)["training"]["epochs"],
            devices=devices,
            io_seconds_per_epoch=recommendation["dataflow"].get("io_seconds_per_epoch", 0.0),
            basis=str(estimate["basis"]),
            scaling=scaling,
        )
        return with_interval({**estimate, **rescaled}, recommendation["hardware_plan"]["device"])
    return estimate
