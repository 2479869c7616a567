"""budget.unmet: when the plan misses the time budget, name the catalogued GPU that would meet it."""

from __future__ import annotations

from collections.abc import Callable

from advisor.contract import Candidate, HardwarePlan, Reason, TaskSpec
from advisor.engine import catalog
from advisor.engine.dataflow import GB, GPU_USABLE
from advisor.engine.rules import reason
from advisor.engine.units import duration


def budget_reason(
    spec: TaskSpec,
    plan: HardwarePlan,
    first: Candidate,
    seconds_on: Callable[[TaskSpec, HardwarePlan], float],
) -> Reason | None:
    """`seconds_on(spec, plan)` estimates the first candidate's training time under another spec and plan."""
    budget = spec["target"]["time_budget_hours"]
    hours = first["estimate"]["seconds_to_train"] / 3600
    if budget is None or hours <= budget:
        return None
    need = first["memory_bytes"]["total"]
    gpus = plan["gpus"] * plan["nodes"]
    where = ("one GPU" if gpus == 1 else f"{gpus} GPUs") if plan["device"] == "gpu" else "your CPU"
    text = f"About {duration(hours * 3600)} on {where}, over your {budget:g} h budget"
    # the slowest (cheapest) single GPU that fits and meets the budget
    for entry in catalog.gpus():  # slowest first
        if entry["memory_gb"] * GB * GPU_USABLE < need or entry["id"] == spec["hardware"]["gpu"]:
            continue
        trial_spec: TaskSpec = {
            **spec,
            "hardware": {**spec["hardware"], "gpu": entry["id"], "gpu_memory_gb": None},
        }
        trial_plan: HardwarePlan = {**plan, "device": "gpu", "gpus": 1, "nodes": 1, "parallelism": "none"}
        trial = seconds_on(trial_spec, trial_plan) / 3600
        if trial <= budget:
            return reason(
                "budget.unmet", f"{text}: one {entry['name']} would take about {duration(trial * 3600)}."
            )
    return reason(
        "budget.unmet",
        f"{text}, and no single catalogued GPU meets it: use several GPUs (data parallelism), the smaller "
        "candidate, fewer epochs, or a larger budget.",
    )
