"""sweep_summary(), the allocator finding and detect_devices(): pure functions over measured rows."""

from __future__ import annotations

from typing import Any

import psutil
import pytest
import torch

from advisor.calibration import detect_devices, local_device, sweep_summary
from advisor.calibration.allocator import child_environment, current_allocator, preloadable
from advisor.calibration.findings import (
    allocator_finding,
    configs_to_recheck,
    remeasure_chance,
    system_share,
)


def row(batch: int, threads: int, seconds: float, allocator: str = "default", **extra: Any) -> dict[str, Any]:
    result = {
        "status": "ok",
        "seconds_per_batch": seconds,
        "examples_per_second": batch / seconds,
        "device": "cpu",
        "threads": threads,
        "noisy": False,
        "user_seconds_per_step": extra.get("user", seconds),
        "system_seconds_per_step": extra.get("system", 0.0),
        "minor_faults_per_step": extra.get("faults", 10.0),
    }
    return {
        "type": "result",
        "batch_size": batch,
        "threads": threads,
        "allocator": allocator,
        "result": result,
    }


def test_it_names_the_fastest_configuration_per_example_and_the_scalings() -> None:
    results = [row(64, 1, 0.10), row(64, 2, 0.06), row(128, 1, 0.18), row(128, 2, 0.10)]
    s = sweep_summary(results, physical_cores=2)
    assert (s["fastest"]["batch_size"], s["fastest"]["threads"]) == (128, 2)
    assert [(r["threads"], round(r["speedup"], 2)) for r in s["thread_scaling"]] == [(1, 1.0), (2, 1.8)]
    assert [r["batch_size"] for r in s["batch_scaling"]] == [64, 128]
    assert s["threads_rule"]["agrees"] is True
    assert "agrees with the plan" in s["threads_rule"]["text"]
    # no plan recorded with the rows: judged against the physical cores, saying so
    assert "did not record the plan's own count, rule cpu.threads.physical" in s["threads_rule"]["text"]
    # Each thread count once, the one it compares with included (not "2 threads ..., 2 threads ...").
    assert (
        "fastest at batch 128: 1 thread 711 examples/s, 2 threads 1,280 examples/s."
        in s["threads_rule"]["text"]
    )


def test_it_says_when_the_measurement_disagrees_with_threads_equal_physical_cores() -> None:
    results = [row(64, 1, 0.050), row(64, 2, 0.070)]
    s = sweep_summary(results, physical_cores=2)
    rule = s["threads_rule"]
    assert (rule["agrees"], rule["measured_best_threads"], rule["rule_threads"]) == (False, 1, 2)
    assert rule["margin"] == pytest.approx(0.4)
    assert "disagrees with the plan" in rule["text"] and "rule cpu.threads.physical" in rule["text"]
    assert "1,280 examples/s" in rule["text"] and "914 examples/s" in rule["text"]
    assert s["reasons"][0]["rule"] == "cpu.threads.physical"


PROFILED = {"threads": 1, "threads_basis": "profiled", "device": "vm-cpu0", "batch_size": 64}
CORES = {"threads": 2, "threads_basis": "cores", "batch_size": 64, "batch_rule": "batch.start"}
MEASURED = {"threads": 2, "threads_basis": "measured", "batch_size": 64, "batch_rule": "plan.measured"}


# (plan, rows at batch 64, threads rule, agrees, words in the text)
THREAD_FINDINGS = [
    (
        PROFILED,
        [(1, 0.050), (2, 0.070)],
        "cpu.threads.profiled",
        True,
        "said 1 thread (from the profile of vm-cpu0",
    ),
    (PROFILED, [(1, 0.070), (2, 0.050)], "cpu.threads.profiled", False, "40% faster with 2 threads"),
    (
        CORES,
        [(1, 0.050), (2, 0.070)],
        "cpu.threads.physical",
        False,
        "said 2 threads (one per physical core,",
    ),
    (
        MEASURED,
        [(1, 0.070), (2, 0.050)],
        "plan.measured",
        True,
        "(from an earlier calibration, rule plan.measured)",
    ),
    ({**PROFILED, "threads": 2}, [(1, 0.050)], "cpu.threads.profiled", None, "cannot judge it"),
    ({"batch_size": 64}, [(1, 0.050), (2, 0.070)], "cpu.threads.physical", False, "did not record"),
]


@pytest.mark.parametrize(("plan", "rows", "rule", "agrees", "words"), THREAD_FINDINGS)
def test_it_judges_the_threads_against_the_plan(
    plan: dict[str, Any], rows: list[tuple[int, float]], rule: str, agrees: bool | None, words: str
) -> None:
    s = sweep_summary([row(64, t, seconds) for t, seconds in rows], physical_cores=2, plan=plan)
    verdict = s["threads_rule"]
    assert (verdict["rule"], verdict["agrees"]) == (rule, agrees)
    assert words in verdict["text"] and s["reasons"][0]["rule"] == rule
    assert verdict["rule_threads"] == plan.get("threads", 2)


# (plan, seconds per batch at batches 64, 128, 256, batch rule, agrees, best batch)
BATCH_FINDINGS = [
    (CORES, (0.064, 0.100, 0.200), "batch.start", False, 128),  # 0.78 ms/example at 128 against 1.0
    (CORES, (0.064, 0.124, 0.240), "batch.start", True, 64),  # all within 10% per example
    (MEASURED, (0.064, 0.100, 0.150), "plan.measured", False, 256),
    ({**CORES, "batch_max": 128}, (0.064, 0.100, 0.150), "batch.start", False, 128),  # 256 is past the cap
    ({**CORES, "batch_size": 32}, (0.064, 0.124, 0.240), "batch.start", None, 64),  # 32 was not measured
    ({**CORES, "batch_size": None}, (0.064, 0.124, 0.240), None, None, None),  # no plan batch: no finding
]


@pytest.mark.parametrize(("plan", "seconds", "rule", "agrees", "best"), BATCH_FINDINGS)
def test_it_judges_the_batch_against_the_plan(
    plan: dict[str, Any], seconds: tuple[float, ...], rule: str | None, agrees: bool | None, best: int | None
) -> None:
    rows = [row(b, 1, t) for b, t in zip((64, 128, 256), seconds, strict=True)]
    finding = sweep_summary(rows, physical_cores=1, plan=plan)["batch_rule"]
    if rule is None:
        assert finding is None
        return
    assert (finding["rule"], finding["agrees"], finding["measured_best_batch"]) == (rule, agrees, best)
    assert f"The plan said mini-batches of {plan['batch_size']} (rule {rule})" in finding["text"]
    assert ("Use mini-batches of" in finding["text"]) == (agrees is False)


def test_it_treats_a_difference_within_noise_as_agreement() -> None:
    s = sweep_summary([row(64, 1, 0.100), row(64, 2, 0.103)], physical_cores=2)
    assert s["threads_rule"]["agrees"] is True


def test_it_lists_out_of_memory_rows_and_accepts_flat_rows() -> None:
    flat = [{**row(64, 1, 0.1)["result"], "batch_size": 64}]
    flat.append(
        {"status": "oom", "batch_size": 128, "threads": 1, "message": "batch 128 does not fit in 0.1 GB"}
    )
    s = sweep_summary(flat, physical_cores=1)
    assert s["oom"] == [{"batch_size": 128, "message": "batch 128 does not fit in 0.1 GB"}]
    assert s["fastest"]["batch_size"] == 64


def test_it_rechecks_the_fastest_batch_of_each_thread_count_and_measures_the_allocator_gain() -> None:
    default = [
        row(64, 1, 0.50, user=0.3, system=0.2, faults=9000),
        row(128, 1, 0.90, user=0.6, system=0.3, faults=18000),
        row(64, 2, 0.40, user=0.5, system=0.3, faults=9000),
    ]
    assert configs_to_recheck(default) == [(64, 2)]
    assert system_share(default) == pytest.approx(0.3 / 0.8)  # at the fastest per example: 64, 2 threads
    tuned = [row(128, 1, 0.60, "tuned", faults=5), row(64, 2, 0.30, "tuned", faults=5)]
    finding = allocator_finding(default + tuned, system_share(default), 0.10)
    assert finding["checked"] and finding["recommended"] == "tuned"
    assert finding["gain"] == pytest.approx(1 - 0.60 / 0.90)  # the fastest tuned configuration per example
    assert finding["env"]["MALLOC_MMAP_THRESHOLD_"] == "4294967296"
    assert finding["reason"]["rule"] == "cpu.allocator"


@pytest.mark.parametrize(
    ("rows", "chance"),
    [
        ([], None),  # nothing measured yet: the plan's chance stands
        ([row(64, 1, 0.5, "tuned", system=0.2)], None),  # only the tuned child's
        ([row(64, 1, 0.5, user=0.48, system=0.02)], 0.0),  # share 0.04: half the threshold or less
        ([row(64, 1, 0.5, user=0.475, system=0.025)], 0.0),  # 0.05: half the threshold exactly
        # the fastest per example decides, as at the sweep's end: 128 at 0.8 s, share 0.10
        ([row(64, 1, 0.5, user=0.48, system=0.02), row(128, 1, 0.8, user=0.72, system=0.08)], 0.5),
        ([row(64, 2, 0.4, user=0.3, system=0.1)], 1.0),  # share 0.25: above 1.5x the threshold, certain
    ],
)
def test_the_remeasure_chance_reads_the_system_share_so_far_against_the_threshold(
    rows: list[dict[str, Any]], chance: float | None
) -> None:
    found = remeasure_chance(rows, 0.10)  # type: ignore[arg-type]
    assert found == (None if chance is None else pytest.approx(chance))


REASON = {"code": "runnable", "text": "more tasks wanted to run than the 2 CPUs in 80% of the samples"}


def _doubtful(
    batch: int, threads: int, seconds: float, allocator: str = "default", **extra: Any
) -> dict[str, Any]:
    event = row(batch, threads, seconds, allocator, **extra)
    event["result"].update(unreliable=True, unreliable_reasons=[REASON])
    return event


def test_unreliable_configurations_decide_nothing_and_are_listed_with_their_reasons() -> None:
    """2 threads measured fastest, but under contention: the threads and the batch are judged on the
    reliable rows, and the verdict says why it cannot judge the plan's count."""
    plan = {
        "threads": 2,
        "threads_basis": "cores",
        "batch_size": 64,
        "batch_rule": "batch.start",
        "batch_max": 256,
    }
    results = [row(64, 1, 0.10), _doubtful(64, 2, 0.02), row(128, 1, 0.21), _doubtful(128, 2, 0.03)]
    s = sweep_summary(results, physical_cores=2, plan=plan)
    assert (s["fastest"]["batch_size"], s["fastest"]["threads"]) == (64, 1)
    assert [r["threads"] for r in s["thread_scaling"]] == [1]
    assert [r["batch_size"] for r in s["batch_scaling"]] == [64, 128]
    assert [(d["batch_size"], d["threads"], d["reasons"]) for d in s["unreliable"]] == [
        (64, 2, [REASON]),
        (128, 2, [REASON]),
    ]
    verdict = s["threads_rule"]
    assert verdict["agrees"] is None and verdict["measured_best_threads"] == 1
    assert "measurement of 2 threads at batch 64 was unreliable (more tasks wanted to run" in verdict["text"]
    assert s["batch_rule"]["measured_best_batch"] == 64
    alone = sweep_summary([_doubtful(64, 1, 0.1)], physical_cores=2, plan=plan)
    assert alone["fastest"] is None and alone["threads_rule"] is None and alone["batch_rule"] is None
    assert len(alone["unreliable"]) == 1


def test_an_unreliable_allocator_pair_keeps_the_default_allocator() -> None:
    default = [row(64, 1, 0.50, user=0.3, system=0.2, faults=9000)]
    tuned = [_doubtful(64, 1, 0.20, "tuned", faults=5)]
    assert configs_to_recheck(default) == [(64, 1)]
    finding = allocator_finding(default + tuned, 0.4, 0.10)
    assert finding["checked"] and finding["configurations"][0]["unreliable"]
    assert finding["recommended"] == "default" and finding["env"] == {}
    assert "0.4\N{MULTIPLICATION SIGN} the time" in finding["text"] and "unreliable" in finding["text"]
    # a reliable default row is rechecked before a faster unreliable one
    assert configs_to_recheck([*default, _doubtful(64, 2, 0.1)]) == [(64, 1)]


def test_it_keeps_the_default_allocator_when_tuning_gains_nothing() -> None:
    default = [row(64, 1, 0.50, user=0.3, system=0.2)]
    finding = allocator_finding([*default, row(64, 1, 0.495, "tuned")], 0.4, 0.10)
    assert finding["recommended"] == "default"
    assert finding["env"] == {}


def test_it_detects_this_machines_cpu() -> None:
    devices = detect_devices()
    cpu = devices[0]
    assert cpu["kind"] == "cpu" and cpu["index"] == 0 and cpu["name"]
    assert cpu["cores"] == (psutil.cpu_count(logical=False) or cpu["cores"])
    assert cpu["threads"] >= cpu["cores"] >= 1
    assert cpu["memory_bytes"] == psutil.virtual_memory().total
    cuda = [d for d in devices if d["kind"] == "cuda"]
    assert len(cuda) == (torch.cuda.device_count() if torch.cuda.is_available() else 0)


@pytest.mark.parametrize(
    ("spec", "tag", "present"),
    [("cpu", "cpu0", True), ("cpu:0", "cpu0", True), ("cpu:1", "cpu1", False), ("cuda:99", "cuda99", False)],
)
def test_it_finds_a_local_device_by_its_spec(spec: str, tag: str, present: bool) -> None:
    found_tag, found = local_device(spec)
    assert found_tag == tag
    assert [(d["kind"], d["index"]) for d in found] == ([("cpu", 0)] if present else [])


def test_it_builds_each_allocator_environment_from_a_clean_one() -> None:
    worker = {"PATH": "/bin", "MALLOC_MMAP_THRESHOLD_": "1", "LD_PRELOAD": "/x/libjemalloc.so.2:/y/libfoo.so"}
    default = child_environment("default", worker)
    assert default == {"PATH": "/bin", "LD_PRELOAD": "/y/libfoo.so"}
    assert current_allocator(default) == "default"
    tuned = child_environment("tuned", worker)
    assert tuned["MALLOC_MMAP_THRESHOLD_"] == "4294967296" and current_allocator(tuned) == "tuned"
    if preloadable("jemalloc"):
        jemalloc = child_environment("jemalloc", worker)
        assert jemalloc["LD_PRELOAD"].split(":")[1:] == ["/y/libfoo.so"]
        assert current_allocator(jemalloc) == "jemalloc" and "MALLOC_MMAP_THRESHOLD_" not in jemalloc
