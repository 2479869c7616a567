"""What each data-parallel rank is given before it joins the group: backend, device and torchrun's variables.

Pure functions, so the CUDA/NCCL choices are checked without a GPU (none is lent to this project's CI)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.calibration.allocator import child_environment
from advisor.calibration.distributed import backend_for, rank_setup
from advisor.calibration.examples import EXAMPLES
from advisor.calibration.scaling import (
    ScalingError,
    ScalingPlan,
    cuda_devices,
    gpu_order,
    rank_payloads,
)


def _payload(**changes: Any) -> dict[str, Any]:
    return {"device": "cpu", "rank": 0, "local_rank": 0, "world_size": 1, "local_world_size": 1} | changes


@pytest.mark.parametrize(
    ("payload", "backend", "device", "local_rank"),
    [
        (_payload(), "gloo", "cpu", "0"),
        (_payload(rank=3, local_rank=1, world_size=4, local_world_size=2), "gloo", "cpu", "1"),
        (_payload(device="cuda", gpu=None), "nccl", "cuda:0", "0"),
        (_payload(device="cuda", rank=1, local_rank=1, world_size=2, gpu=None), "nccl", "cuda:1", "1"),
        (_payload(device="cuda", rank=0, local_rank=0, world_size=2, gpu=2), "nccl", "cuda:2", "0"),
        (_payload(device="cuda", rank=5, local_rank=1, world_size=8, gpu=0), "nccl", "cuda:0", "1"),
    ],
)
def test_it_gives_each_rank_its_backend_device_and_variables(
    payload: dict[str, Any], backend: str, device: str, local_rank: str
) -> None:
    chosen, dev, env = rank_setup(payload)
    assert (chosen, dev) == (backend, device)
    assert env["LOCAL_RANK"] == local_rank
    assert env["RANK"] == str(payload["rank"]) and env["WORLD_SIZE"] == str(payload["world_size"])
    assert env["LOCAL_WORLD_SIZE"] == str(payload["local_world_size"])


@pytest.mark.parametrize(("device", "backend"), [("cuda", "nccl"), ("cuda:1", "nccl"), ("cpu", "gloo")])
def test_it_picks_nccl_for_cuda_and_gloo_for_the_cpu(device: str, backend: str) -> None:
    assert backend_for(device) == backend


@pytest.mark.parametrize(
    ("first", "available", "order"),
    [(0, 1, [0]), (0, 4, [0, 1, 2, 3]), (2, 4, [2, 0, 1, 3]), (3, 4, [3, 0, 1, 2])],
)
def test_it_puts_the_jobs_own_gpu_first(first: int, available: int, order: list[int]) -> None:
    assert gpu_order(first, available) == order


def test_it_passes_nccl_and_gloo_settings_to_the_ranks() -> None:
    base = {"NCCL_DEBUG": "INFO", "NCCL_SOCKET_IFNAME": "eth1", "GLOO_SOCKET_IFNAME": "eth1", "PATH": "/bin"}
    for setup in ("default", "tuned"):
        env = child_environment(setup, base)
        assert {k: env[k] for k in base} == base


def test_it_gives_cpu_ranks_no_gpu() -> None:
    plan = ScalingPlan(EXAMPLES["tabular-mlp"](), world_sizes=[1], threads=1)
    (payload,) = rank_payloads(plan, 1, store_host="127.0.0.1", store_port=1)
    assert payload["gpu"] is None and rank_setup(payload)[:2] == ("gloo", "cpu")


def test_it_refuses_more_cuda_ranks_than_this_host_has_gpus() -> None:
    with pytest.raises(ScalingError) as caught:
        ScalingPlan(EXAMPLES["tabular-mlp"](), world_sizes=[cuda_devices() + 1], device="cuda")
    assert "world_sizes" in caught.value.errors
