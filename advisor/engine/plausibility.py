"""Plausibility: hardware and targets that contradict themselves are warned about, naming the field, not
refused.

Each value passed the spec's own range checks (which refuse the impossible: a negative RAM, zero cores), yet
together they describe no real machine or no reachable goal: 64 GPUs fed by 2 CPU cores, 0.01 GB of RAM beside
tens of MB of training state, 0.001 GB of GPU memory, a budget of a few seconds for a 45-minute run. Most are
unit slips (MB typed as GB, minutes as hours); the recommendation still follows the numbers as given."""

from __future__ import annotations

from advisor.contract import Candidate, HardwarePlan, PlausibilityWarning, TaskSpec
from advisor.engine import catalog
from advisor.engine.dataflow import GB
from advisor.engine.units import duration, nbytes

# Beyond this many GPUs in all, no cluster in existence matches (the largest ones hold about 100,000).
MAX_PLAUSIBLE_GPUS = 100_000
# A budget under this share of the estimate cannot be met by any plan the engine knows (its largest speed-up
# from more devices is far smaller): a unit slip rather than a goal.
BUDGET_FRACTION = 0.01
# A value this many times too small is more likely a unit slip (MB typed as GB) than a small machine.
UNIT_SLIP = 100


def warnings(spec: TaskSpec, first: Candidate, plan: HardwarePlan) -> list[PlausibilityWarning]:
    """The warnings for a normalised spec, its first candidate (with its estimate) and the hardware plan."""
    found: list[PlausibilityWarning] = []
    hw = spec["hardware"]

    def warn(field: str, message: str) -> None:
        found.append({"field": field, "message": message})

    if hw["gpus_per_node"] > hw["cpu_cores"]:
        warn(
            "hardware.gpus_per_node",
            f"{hw['gpus_per_node']} GPUs per node but {hw['cpu_cores']} CPU cores: each GPU needs at least "
            "one core to prepare its batches and launch its kernels, so most GPUs would wait. Check "
            "hardware.gpus_per_node and hardware.cpu_cores (cores per node).",
        )
    if hw["gpus_per_node"] * hw["nodes"] > MAX_PLAUSIBLE_GPUS:
        warn(
            "hardware.nodes",
            f"{hw['gpus_per_node']} GPUs on each of {hw['nodes']:,} nodes is "
            f"{hw['gpus_per_node'] * hw['nodes']:,} GPUs, more than the largest clusters in existence "
            f"(about {MAX_PLAUSIBLE_GPUS:,}).",
        )
    # On a CPU the RAM holds the whole training state; beside a GPU it holds at least a copy of the weights.
    memory = first["memory_bytes"]
    needed = memory["total"] if plan["device"] == "cpu" else memory["weights"]
    if hw["ram_gb"] * GB < needed:
        what = (
            "training (weights, gradients, optimizer state, activations)"
            if plan["device"] == "cpu"
            else ("a copy of its weights")
        )
        warn(
            "hardware.ram_gb",
            f"{hw['ram_gb']:g} GB of RAM is less than the {nbytes(needed)} the first candidate needs for "
            f"{what}: the machine would swap or fail."
            + (
                " Is hardware.ram_gb in GB?"
                if hw["ram_gb"] * GB * UNIT_SLIP < needed
                else " Check hardware.ram_gb."
            ),
        )
    smallest = min(catalog.gpus(), key=lambda g: g["memory_gb"])
    if hw["gpu_memory_gb"] is not None and hw["gpu_memory_gb"] < smallest["memory_gb"]:
        warn(
            "hardware.gpu_memory_gb",
            f"{hw['gpu_memory_gb']:g} GB is less than any catalogued GPU has (the smallest, the "
            f"{smallest['name']}, has {smallest['memory_gb']:g} GB). Is hardware.gpu_memory_gb in GB?",
        )
    if spec["task"] == "generation" and spec["target"]["accuracy"] is not None:
        warn(
            "target.accuracy",
            f"target.accuracy ({spec['target']['accuracy']:g}) has no meaning for generation and is not "
            "used: generated examples are judged by how well they pass for real ones (target.two_sample, "
            "0 to 1).",
        )
    budget = spec["target"]["time_budget_hours"]
    estimate = first["estimate"]["seconds_to_train"]
    if budget is not None and budget * 3600 < BUDGET_FRACTION * estimate:
        warn(
            "target.time_budget_hours",
            f"A budget of {budget:g} h is under {BUDGET_FRACTION:.0%} of the estimated "
            f"{duration(estimate)} to train: no hardware plan closes such a gap. Is "
            "target.time_budget_hours in hours?",
        )
    return found
