"""Data flow and the processing-unit plan, including Wünsche's worked examples (W §II, §IV-B)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import gpu_catalog, normalise, recommend
from advisor.engine.catalog import link
from advisor.engine.dataflow import (
    dataflow,
    effective_compute_fraction,
    finish,
    input_values,
    transfer_seconds,
)
from tests.engine.specs import GPU, out_of_ram, spec


def test_it_counts_a_512x512_greyscale_image_as_262144_inputs() -> None:
    assert input_values([1, 512, 512]) == 262_144
    rec = recommend(spec("vision", [1, 512, 512], outputs=2))
    assert rec["candidates"][0]["networks"]["model"][0]["args"]["in_channels"] == 1
    assert rec["dataflow"]["dataset_bytes"] == 10_000 * 262_144 * 4


def test_it_reproduces_the_papers_pcie_refresh_times() -> None:
    gtx1080 = next(g for g in gpu_catalog() if g["id"] == "gtx-1080")
    pcie4 = link("pcie4")["gbps"]
    one = transfer_seconds(gtx1080["memory_gb"] * 1e9, pcie4)
    assert round(one, 6) == 0.253968
    assert round(4 * one, 6) == 1.015873
    assert round(3 * one, 4) == 0.7619


def test_it_reproduces_the_papers_effective_compute_fraction_through_the_engines_data_flow() -> None:
    # three GTX 1080 on one PCIe 4.0 x16 bus, 24 GB of training data per iteration in host memory
    hardware = {**GPU, "gpus_per_node": 3, "link": "pcie4", "ram_gb": 64}
    clean = normalise(
        spec("vision", [1, 1000, 1000], outputs=2, examples=3_000, bytes_per_value=8, hardware=hardware)
    )
    plan = {"device": "gpu", "gpus": 3, "nodes": 1}
    flow = dataflow(clean, plan, training_bytes_per_gpu=10**9)
    assert flow["fits_in_ram"] and not flow["fits_in_gpu"]
    assert round(flow["transfer_seconds_per_epoch"], 4) == 0.7619
    finish(flow, compute_seconds_per_epoch=0.5)
    assert f"{100 * flow['effective_compute_fraction']:.2f}" == "65.62"
    assert round(flow["transfer_seconds_per_epoch"] - 0.5, 4) == 0.2619  # idle each iteration
    assert any("65.62%" in r["text"] for r in flow["reasons"] if r["rule"] == "data.pcie")


@pytest.mark.parametrize(
    ("compute", "transfer", "fraction"), [(1.0, 0.5, 1.0), (0.5, 1.0, 0.5), (0.0, 0.0, 1.0)]
)
def test_it_computes_the_effective_fraction_with_prefetching(
    compute: float, transfer: float, fraction: float
) -> None:
    assert effective_compute_fraction(compute, transfer) == fraction


@pytest.mark.parametrize(
    ("storage", "faster_than"), [("nvme-raid0", "nvme"), ("nvme", "ssd"), ("ssd", "hdd")]
)
def test_it_lets_storage_bound_an_epoch_when_data_exceeds_ram(storage: str, faster_than: str) -> None:
    def io(kind: str) -> float:
        rec = recommend(out_of_ram(kind))
        assert not rec["dataflow"]["fits_in_ram"]
        return float(rec["dataflow"]["io_seconds_per_epoch"])

    assert io(storage) < io(faster_than)


def test_it_keeps_data_resident_on_the_gpu_when_it_fits() -> None:
    rec = recommend(spec("vision", [1, 28, 28], outputs=10, examples=60_000, hardware=GPU))
    assert rec["dataflow"]["fits_in_gpu"] and rec["dataflow"]["transfer_seconds_per_epoch"] == 0.0
    assert rec["dataflow"]["effective_compute_fraction"] == 1.0


def _plan(**hardware: Any) -> dict[str, Any]:
    target = hardware.pop("target", None)
    extra = {"target": target} if target else {}
    rec = recommend(
        spec("vision", [3, 224, 224], outputs=1000, examples=1_281_167, hardware={**GPU, **hardware}, **extra)
    )
    plan: dict[str, Any] = rec["hardware_plan"]
    return plan


def test_it_uses_physical_cores_and_the_cpu_without_a_gpu() -> None:
    plan = recommend(
        spec("tabular", [20], outputs=2, hardware={"cpu_cores": 6, "cpu_threads": 12, "ram_gb": 8})
    )["hardware_plan"]
    assert (plan["device"], plan["threads"], plan["gpus"], plan["parallelism"]) == ("cpu", 6, 0, "none")


def test_it_adds_gpus_only_when_the_budget_needs_them() -> None:
    assert _plan(gpus_per_node=8)["gpus"] == 1  # no budget: one GPU
    assert _plan(gpus_per_node=8, target={"time_budget_hours": 1000})["gpus"] == 1
    tight = _plan(gpus_per_node=8, target={"time_budget_hours": 3})
    tighter = _plan(gpus_per_node=8, target={"time_budget_hours": 1})
    assert 1 < tight["gpus"] <= tighter["gpus"] <= 8
    assert tight["parallelism"] == "data" and tight["sync"] == "sync"


def test_it_switches_to_mixed_async_past_40_gpus_or_across_multi_gpu_nodes() -> None:
    many = _plan(gpus_per_node=64, target={"time_budget_hours": 0.01})
    assert many["gpus"] == 64 and many["sync"] == "mixed"
    nodes = _plan(gpus_per_node=4, nodes=4, target={"time_budget_hours": 0.5})
    assert nodes["nodes"] > 1 and nodes["sync"] == "mixed"


def _tabular_on_gpus(
    features: int, outputs: int, *, target: dict[str, Any] | None = None, **hardware: Any
) -> dict[str, Any]:
    """The recommendation for a tabular classifier on GPU hardware with `hardware`'s changes."""
    extra = {} if target is None else {"target": target}
    return recommend(spec("tabular", [features], outputs=outputs, hardware={**GPU, **hardware}, **extra))


def test_it_keeps_small_tasks_off_the_cluster() -> None:
    rec = _tabular_on_gpus(20, 2, target={"time_budget_hours": 1}, gpus_per_node=8, nodes=16)
    assert (rec["hardware_plan"]["gpus"], rec["hardware_plan"]["nodes"]) == (1, 1)


def test_it_splits_a_model_that_fits_no_single_gpu() -> None:
    rec = _tabular_on_gpus(30_000, 10, gpu="gtx-980", gpus_per_node=8)
    plan = rec["hardware_plan"]
    assert plan["parallelism"] == "model" and plan["gpus"] > 1 and plan["device"] == "gpu"
    assert plan["gpus"] * 4e9 * 0.9 >= rec["candidates"][0]["memory_bytes"]["total"]


def test_it_answers_a_network_larger_than_any_memory_with_the_rule_that_says_so() -> None:
    rec = _tabular_on_gpus(2_000_000, 10)
    assert rec["hardware_plan"]["device"] == "cpu"
    assert "size.exceeds.memory" in {r["rule"] for r in rec["reasons"]}
    assert "gpu.memory" in {r["rule"] for r in rec["hardware_plan"]["reasons"]}


@pytest.mark.parametrize("per_node", [1, 8])
def test_it_answers_when_the_gpu_is_too_small_for_anything(per_node: int) -> None:
    rec = _tabular_on_gpus(20, 2, gpu_memory_gb=1e-9, gpus_per_node=per_node)
    assert rec["hardware_plan"]["device"] == "cpu"
    assert "gpu.memory" in {r["rule"] for r in rec["hardware_plan"]["reasons"]}


def test_it_goes_hybrid_when_a_split_model_needs_more_than_one_node() -> None:
    rec = _tabular_on_gpus(30_000, 10, gpu="gtx-980", gpus_per_node=2, nodes=4)
    plan = rec["hardware_plan"]
    assert plan["parallelism"] == "hybrid" and plan["nodes"] > 1 and plan["gpus"] == 2
    assert plan["sync"] == "mixed"
