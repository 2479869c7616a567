"""run_job(): sweeps in a real spawned child, out of memory under a real cap, cancellation, time limit, crash,
and the allocator re-measure. Each test starts real child processes (2-5 s each to import torch)."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from typing import Any

import psutil
import pytest

from advisor.calibration import JobPlan, PlanError, run_job
from advisor.calibration.allocator import preloadable
from tests.calibration import candidates as C

pytestmark = pytest.mark.slow

QUICK = {"min_iterations": 2, "min_seconds": 0.0, "warmup": 1}


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_it_sweeps_batches_and_threads_in_a_child_and_relays_each_result() -> None:
    rec = Recorder()
    plan = JobPlan(C.ffn(), batch_sizes=[16, 8], threads=[1, 2], allocator="default", **QUICK)
    summary = run_job(plan, on_event=rec, should_cancel=lambda: False)
    assert summary["status"] == "succeeded", summary["error"]
    results = rec.of("result")
    assert [(e["batch_size"], e["threads"]) for e in results] == [(8, 1), (8, 2), (16, 1), (16, 2)]
    assert all(e["pid"] != os.getpid() and e["allocator"] == "default" for e in results)
    assert all(e["result"]["status"] == "ok" and e["result"]["threads"] == e["threads"] for e in results)
    # each configuration also times gathering a shuffled batch, the part of a real epoch's step it skips
    assert all(e["result"]["gather_seconds_per_batch"] > 0 for e in results)
    progress = rec.of("progress")
    assert progress[0]["done"] == 0 and progress[-1]["done"] == progress[-1]["total"] == 4
    assert "batch 8, 1 thread: timing" in [p["step"] for p in progress]
    # two steps pin no median: every configuration is unreliable, says why, and decides nothing
    assert all(e["result"]["unreliable"] for e in results)
    assert all("interval" in [r["code"] for r in e["result"]["unreliable_reasons"]] for e in results)
    assert [(d["batch_size"], d["threads"]) for d in summary["unreliable"]] == [
        (8, 1),
        (8, 2),
        (16, 1),
        (16, 2),
    ]
    assert summary["fastest"] is None and summary["threads_rule"] is None and summary["thread_scaling"] == []


def test_it_sums_up_the_reliable_configurations_only() -> None:
    """Timed until their medians are pinned (or 0.6 s each): whichever configurations the machine let be
    reliable make the summary; the others are listed with their reasons."""
    rec = Recorder()
    plan = JobPlan(
        C.ffn(), batch_sizes=[8], threads=[1, 2], allocator="default", min_iterations=5, min_seconds=0.1
    )
    summary = run_job(plan, on_event=rec, should_cancel=lambda: False)
    assert summary["status"] == "succeeded", summary["error"]
    results = rec.of("result")
    reliable = [e for e in results if not e["result"]["unreliable"]]
    doubtful = [e["threads"] for e in results if e["result"]["unreliable"]]
    assert [d["threads"] for d in summary["unreliable"]] == doubtful
    assert all(d["reasons"] for d in summary["unreliable"])
    assert {r["threads"] for r in summary["thread_scaling"]} == {e["threads"] for e in reliable}
    if reliable:
        assert summary["fastest"]["seconds_per_example"] == min(
            e["result"]["seconds_per_batch"] / e["batch_size"] for e in reliable
        )
        assert summary["threads_rule"]["rule"] == "cpu.threads.physical"
    else:
        assert summary["fastest"] is None


def test_it_doubles_the_batch_until_a_real_memory_cap_is_hit() -> None:
    """The child caps its data memory (RLIMIT_DATA); torch's allocation fails for real beyond it."""
    rec = Recorder()
    cand = C.ffn(features=8000, hidden=64, outputs=4)  # the input alone is 32 KB per example
    cand["training"]["batch_size"] = 256
    plan = JobPlan(
        cand,
        threads=[1],
        memory_limit_bytes=100_000_000,
        stop_on_plateau=False,
        sweep_budget_s=None,
        allocator="default",
        **QUICK,
    )
    summary = run_job(plan, on_event=rec, should_cancel=lambda: False)
    assert summary["status"] == "succeeded", summary["error"]
    sizes = [e["batch_size"] for e in rec.of("result")]
    assert sizes == [256 * 2**i for i in range(len(sizes))]
    last = rec.of("result")[-1]["result"]
    assert last["status"] == "oom"
    assert last["message"] == f"batch {sizes[-1]} does not fit in 0.1 GB; {sizes[-2]} does"
    assert sizes[-1] < 4096  # stopped by the cap, not by the sweep's own limit
    assert summary["stop_reason"] == f"out of memory at batch {sizes[-1]}"
    assert summary["oom"][0]["batch_size"] == sizes[-1]


def test_it_cancels_and_stops_the_child() -> None:
    rec = Recorder()
    plan = JobPlan(C.ffn(), batch_sizes=[8, 16, 32, 64], threads=[1], min_seconds=1.0, allocator="default")
    summary = run_job(plan, on_event=rec, should_cancel=lambda: bool(rec.of("result")))
    assert (summary["status"], summary["error"]) == ("cancelled", "cancelled on request")
    assert 1 <= len(summary["results"]) < 4  # four configurations were planned; the cancel cut them short
    assert not any(_alive(c["pid"]) for c in summary["children"])


def test_it_stops_the_child_at_the_time_limit() -> None:
    rec = Recorder()
    plan = JobPlan(
        C.ffn(), batch_sizes=[8], threads=[1], min_seconds=60.0, time_limit_s=5.0, allocator="default"
    )
    summary = run_job(plan, on_event=rec, should_cancel=lambda: False)
    # the one configuration times for 60 s: without the stop at 5 s it would finish and succeed
    assert (summary["status"], summary["results"]) == ("timed_out", [])
    assert not any(_alive(c["pid"]) for c in summary["children"])


def test_it_reports_a_child_that_dies_with_its_exit_code() -> None:
    """The child is killed from outside with SIGSEGV, as a segfault or the OOM killer would end it."""
    rec = Recorder()

    def crash(event: dict[str, Any]) -> None:
        rec(event)
        if event["type"] == "progress":
            os.kill(event["pid"], signal.SIGSEGV)

    plan = JobPlan(C.ffn(), batch_sizes=[8], threads=[1], min_seconds=5.0, allocator="default")
    summary = run_job(plan, on_event=crash, should_cancel=lambda: False)
    assert summary["status"] == "failed"
    assert summary["error"] == "calibration process died with exit code -11 (SIGSEGV)"


def test_it_reports_an_error_raised_in_the_child() -> None:
    cand = C.ffn()
    cand["networks"]["model"][1] = C.L("Sigmoidish")
    summary = run_job(
        JobPlan(cand, batch_sizes=[8], threads=[1], **QUICK), on_event=Recorder(), should_cancel=lambda: False
    )
    assert summary["status"] == "failed"
    assert "Sigmoidish" in summary["error"]


def _wide_plan(**allocation: Any) -> JobPlan:
    """The allocator tests' job: a 3000-wide MLP (36 MB gradients), batch 8, one thread, short."""
    return JobPlan(
        C.wide_mlp(3000),
        batch_sizes=[8],
        threads=[1],
        min_iterations=6,
        min_seconds=0.0,
        warmup=3,
        **allocation,
    )


def test_it_remeasures_with_the_tuned_allocator_when_system_time_is_significant() -> None:
    """36 MB gradients: glibc's default malloc maps and unmaps them every step (page faults, system time);
    switched to the tuned thresholds (mallopt), the same child keeps them in its heap."""
    rec = Recorder()
    plan = _wide_plan(allocator="auto", system_share_threshold=0.05)
    summary = run_job(plan, on_event=rec, should_cancel=lambda: False)
    assert summary["status"] == "succeeded", summary["error"]
    by_alloc = {e["allocator"]: e for e in rec.of("result")}
    assert set(by_alloc) == {"default", "tuned"}
    # one child measured both: the re-measure pays no second start of torch
    assert by_alloc["default"]["pid"] == by_alloc["tuned"]["pid"]
    assert [c["allocator"] for c in summary["children"]] == ["default"]
    # announced before it is timed, so that the remaining time counts it
    (announced,) = [e for e in rec.of("progress") if e.get("restart")]
    assert announced["done"] == 1 and announced["total"] == 2
    finding = summary["allocator"]
    assert finding["checked"] and finding["significant"]
    (pair,) = finding["configurations"]
    # the default maps and faults in the 36 MB gradient every step; the tuned heap has it from the warm-up on
    assert pair["tuned_minor_faults_per_step"] < pair["default_minor_faults_per_step"] / 2
    assert finding["recommended"] in {"tuned", "default"}
    assert finding["gain"] == pytest.approx(
        1 - pair["tuned_seconds_per_batch"] / pair["default_seconds_per_batch"]
    )
    assert "cpu.allocator" in [r["rule"] for r in summary["reasons"]]


def test_a_sweep_that_stopped_early_announces_its_remeasure_as_the_one_configuration_left() -> None:
    """A doubling sweep stopped by its budget long before its cap: the re-measure's announcement counts one
    configuration ahead, not the sweep's unstarted ones (the remaining time prices what `total` counts)."""
    rec = Recorder()
    plan = replace(
        _wide_plan(allocator="auto", system_share_threshold=0.0), batch_sizes=[], sweep_budget_s=1.0
    )
    summary = run_job(plan, on_event=rec, should_cancel=lambda: False)
    assert summary["status"] == "succeeded", summary["error"]
    sweep = [e for e in rec.of("progress") if not e.get("restart") and e.get("step") != "finished"]
    planned = max(e["total"] for e in sweep)
    (announced,) = [e for e in rec.of("progress") if e.get("restart")]
    assert announced["done"] < planned  # stopped early: a 3000-wide MLP does not reach batch 4096 in 1 s
    assert announced["total"] == announced["done"] + 1


def test_it_does_not_remeasure_where_system_time_is_below_the_threshold() -> None:
    rec = Recorder()
    summary = run_job(
        _wide_plan(allocator="auto", system_share_threshold=1.0), on_event=rec, should_cancel=lambda: False
    )
    assert summary["status"] == "succeeded", summary["error"]
    assert [e["allocator"] for e in summary["results"]] == ["default"]
    assert not any(e.get("restart") for e in rec.of("progress"))
    assert summary["allocator"] is not None and not summary["allocator"]["checked"]


def test_a_remeasure_switches_the_process_and_its_results_say_tuned() -> None:
    event, again = run_job(
        _wide_plan(allocator="auto", system_share_threshold=0.0),
        on_event=Recorder(),
        should_cancel=lambda: False,
    )["results"]
    assert [event["allocator"], again["allocator"]] == ["default", "tuned"]
    assert event["result"]["allocator"] == "default" and again["result"]["allocator"] == "tuned"


@pytest.mark.skipif(preloadable("jemalloc") is None, reason="jemalloc is not installed here")
def test_it_measures_with_jemalloc_preloaded_in_the_child() -> None:
    plan = _wide_plan(allocator="jemalloc")
    summary = run_job(plan, on_event=Recorder(), should_cancel=lambda: False)
    assert summary["status"] == "succeeded", summary["error"]
    (event,) = summary["results"]
    assert event["allocator"] == event["result"]["allocator"] == "jemalloc"
    assert event["result"]["minor_faults_per_step"] < 8790 / 2  # the 36 MB gradient is kept, not re-faulted


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("allocator", "fast"),
        ("time_limit_s", 0),
        ("batch_sizes", [0]),
        ("threads", [-1]),
        ("device", "tpu"),
        ("examples", 0),
    ],
)
def test_it_rejects_a_bad_plan_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(PlanError) as info:
        JobPlan(C.ffn(), **{field: value})
    assert set(info.value.errors) == {field}
