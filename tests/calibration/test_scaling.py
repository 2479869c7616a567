"""Data-parallel calibration: real gloo process groups of real DDP ranks on this machine's CPU."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import psutil
import pytest

from advisor.calibration.allocator import child_environment
from advisor.calibration.examples import EXAMPLES
from advisor.calibration.scaling import (
    ScalingError,
    ScalingPlan,
    free_port,
    max_world_size,
    rank_payloads,
    run_ranks,
    run_scaling,
)
from tests.processes import spawned_children

SMALL = EXAMPLES["tabular-mlp"]()


def _ranks_left() -> list[psutil.Process]:
    return spawned_children(psutil.Process())


def test_it_times_two_gloo_ranks_of_one_thread_against_one() -> None:
    plan = ScalingPlan(SMALL, world_sizes=[1, 2], threads=1, min_seconds=0.2, time_limit_s=240)
    result = run_scaling(plan)

    assert result["status"] == "succeeded", result["error"]
    one, two = result["rows"]
    assert (one["world_size"], two["world_size"]) == (1, 2)
    assert {one["backend"], two["backend"]} == {"gloo"}
    assert two["threads_per_rank"] == 1 and two["devices"] == ["cpu", "cpu"]
    assert two["examples_per_second"] == pytest.approx(2 * 64 / two["seconds_per_step"])
    assert two["efficiency"] == pytest.approx(two["examples_per_second"] / (2 * one["examples_per_second"]))
    assert one["efficiency"] == 1.0
    assert two["allreduce_seconds"] > 0 and two["allreduce_share"] > 0
    assert two["iterations"] >= 5 and two["allocator"] == "tuned"
    assert not _ranks_left()


def test_it_runs_post_local_sgd_with_periodic_averaging() -> None:
    plan = ScalingPlan(
        EXAMPLES["mnist-cnn"](), world_sizes=[2], threads=1, sync="mixed", average_period=2, min_seconds=0.2
    )
    result = run_scaling(plan)

    assert result["status"] == "succeeded", result["error"]
    (row,) = result["rows"]
    assert row["sync"] == "mixed" and row["world_size"] == 2 and row["allreduce_seconds"] > 0


def _start_and_then(plan: ScalingPlan, *, kill: bool) -> tuple[str, str | None, list[Any]]:
    """Run a 2-rank world that would time for minutes; once rank 1 times its steps, SIGKILL it or cancel.
    Without the kill or the cancel the world ends at its deadline as `timed_out`, so the status says which
    of them ended it; no wall-clock bound is needed."""
    payloads = rank_payloads(plan, 2, store_host="127.0.0.1", store_port=free_port())
    acted: list[int] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["rank"] == 1 and not acted:
            acted.append(event["pid"])
            if kill:
                os.kill(event["pid"], signal.SIGKILL)

    outcome = run_ranks(
        payloads,
        child_environment("tuned"),
        deadline=time.monotonic() + 200,
        should_cancel=lambda: bool(acted) and not kill,
        on_event=on_event,
    )
    assert acted, "rank 1 never started timing"
    return outcome


LONG = ScalingPlan(SMALL, world_sizes=[2], threads=1, min_iterations=10**6, min_seconds=120, time_limit_s=200)


def test_it_fails_the_world_with_a_reason_when_a_rank_dies() -> None:
    status, reason, ranks = _start_and_then(LONG, kill=True)

    assert status == "failed" and ranks == []
    assert reason is not None and "rank" in reason
    assert not _ranks_left()


def test_it_cancels_every_rank() -> None:
    status, reason, _ = _start_and_then(LONG, kill=False)

    assert (status, reason) == ("cancelled", "cancelled on request")
    assert not _ranks_left()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"world_sizes": [max_world_size("cpu") + 1]}, "world_sizes"),
        ({"world_sizes": [0]}, "world_sizes"),
        ({"world_sizes": []}, "world_sizes"),
        ({"sync": "async"}, "sync"),
        ({"device": "tpu"}, "device"),
        ({"candidate": EXAMPLES["mnist-rbm"]()}, "candidate"),
        ({"sync": "mixed", "mixed_group": 2, "world_sizes": [1]}, "mixed_group"),
        ({"average_period": 0}, "average_period"),
        ({"collective_timeout_s": 0}, "collective_timeout_s"),
    ],
)
def test_it_refuses_a_plan_it_cannot_run(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ScalingError) as caught:
        ScalingPlan(**{"candidate": SMALL, **change})
    assert field in caught.value.errors
