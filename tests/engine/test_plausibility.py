"""Plausibility warnings: hardware or targets that contradict themselves are warned about, naming the field;
the recommendation is still made. Each row is the issue's case (or its neighbour that must stay silent)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import SpecError, recommend
from tests.engine.specs import CPU, GPU, grid, spec

TABULAR = spec("tabular", [16], outputs=3, examples=2000)
CIFAR = spec("vision", [3, 32, 32], outputs=10, examples=50_000)

CASES: list[tuple[str, dict[str, Any], set[str]]] = [
    ("64 GPUs per node, 100,000 nodes, 2 cores", spec("tabular", [16], outputs=3,
        hardware={"cpu_cores": 2, "ram_gb": 64, "gpu": "gtx-1080", "gpus_per_node": 64, "nodes": 100_000}),
     {"hardware.gpus_per_node", "hardware.nodes"}),
    ("8 GPUs fed by 8 cores", spec("tabular", [16], outputs=3, hardware={**GPU, "gpus_per_node": 8}), set()),
    ("0.001 GB of GPU memory", spec("tabular", [16], outputs=3, hardware={**GPU, "gpu_memory_gb": 0.001}),
     {"hardware.gpu_memory_gb"}),
    ("a GPU's real memory", spec("tabular", [16], outputs=3, hardware={**GPU, "gpu_memory_gb": 8}), set()),
    ("0.00001 GB of RAM on a CPU", spec("vision", [3, 32, 32], outputs=10, hardware={"cpu_cores": 2,
        "ram_gb": 0.00001}), {"hardware.ram_gb"}),
    ("0.00001 GB of RAM beside a GPU", spec("vision", [3, 32, 32], outputs=10, hardware={**GPU,
        "ram_gb": 0.00001}), {"hardware.ram_gb"}),
    ("a budget of a few ms", spec("vision", [3, 32, 32], outputs=10, examples=50_000,
        target={"time_budget_hours": 0.000001}), {"target.time_budget_hours"}),
    ("a budget just missed", spec("vision", [3, 32, 32], outputs=10, examples=50_000,
        target={"time_budget_hours": 0.01}), set()),
    ("plain CPU laptop", TABULAR, set()),
    ("an accuracy target for generation", spec("generation", [3, 32, 32], target={"accuracy": 0.98}),
     {"target.accuracy"}),
    ("a two-sample target for generation", spec("generation", [3, 32, 32], target={"two_sample": 0.8}),
     set()),
]  # fmt: skip


@pytest.mark.parametrize(("label", "given", "fields"), CASES, ids=[c[0] for c in CASES])
def test_it_warns_naming_the_field(label: str, given: dict[str, Any], fields: set[str]) -> None:
    rec = recommend(given)
    assert {w["field"] for w in rec["warnings"]} == fields
    assert rec["candidates"], "a warning never stops the advice"
    for warning in rec["warnings"]:
        assert warning["field"] in warning["message"] or warning["field"].startswith("hardware.nodes")


def test_the_budget_warning_compares_with_the_estimate() -> None:
    rec = recommend(spec("vision", [3, 32, 32], outputs=10, examples=50_000))
    seconds = rec["candidates"][0]["estimate"]["seconds_to_train"]
    just_under = recommend({**CIFAR, "target": {"time_budget_hours": 0.009 * seconds / 3600}})
    just_over = recommend({**CIFAR, "target": {"time_budget_hours": 0.011 * seconds / 3600}})
    assert [w["field"] for w in just_under["warnings"]] == ["target.time_budget_hours"]
    assert just_over["warnings"] == []


def test_the_ram_warning_compares_with_the_training_memory() -> None:
    total = recommend(TABULAR)["candidates"][0]["memory_bytes"]["total"]
    below = {**TABULAR, "hardware": {**CPU, "ram_gb": 0.9 * total / 1e9}}
    above = {**TABULAR, "hardware": {**CPU, "ram_gb": 1.1 * total / 1e9}}
    assert [w["field"] for w in recommend(below)["warnings"]] == ["hardware.ram_gb"]
    assert recommend(above)["warnings"] == []


@pytest.mark.parametrize(
    ("hardware", "field"),
    [
        ({"cpu_cores": 0, "ram_gb": 8}, "hardware.cpu_cores"),
        ({"cpu_cores": 2, "ram_gb": 0}, "hardware.ram_gb"),
        ({"cpu_cores": 2, "ram_gb": -1}, "hardware.ram_gb"),
        ({**GPU, "gpu_memory_gb": 0}, "hardware.gpu_memory_gb"),
        ({**GPU, "gpus_per_node": 0}, "hardware.gpus_per_node"),
        ({**GPU, "nodes": 0}, "hardware.nodes"),
        ({"cpu_cores": 4, "cpu_threads": 2, "ram_gb": 8}, "hardware.cpu_threads"),
    ],
)
def test_it_refuses_the_impossible_naming_the_field(hardware: dict[str, Any], field: str) -> None:
    with pytest.raises(SpecError) as info:
        recommend({**TABULAR, "hardware": hardware})
    assert field in info.value.errors


def test_the_grid_warns_only_where_training_outgrows_the_ram() -> None:
    """The broad grid's hardware is plausible; only a network whose training state exceeds the RAM is
    warned about (a real limit, not a slip, so without the unit question)."""
    for task_spec in grid():
        rec = recommend(task_spec)
        total = rec["candidates"][0]["memory_bytes"]["total"]
        too_big = rec["hardware_plan"]["device"] == "cpu" and total > rec["spec"]["hardware"]["ram_gb"] * 1e9
        assert [w["field"] for w in rec["warnings"]] == (["hardware.ram_gb"] if too_big else []), task_spec
        assert all("in GB?" not in w["message"] for w in rec["warnings"])
