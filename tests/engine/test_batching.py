"""The batch and threads chosen from the time model (batch.profiled, cpu.threads.profiled) and a calibration's
measurement overriding them (plan.measured), table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import follow_measurement, recommend
from advisor.engine.batching import (
    BATCH_MAX,
    BATCH_MIN,
    BATCH_TOLERANCE,
    LARGE_BATCH_SHARE,
    powers_of_two,
    smallest_near_fastest,
)
from advisor.engine.costmodel import step_cost
from advisor.engine.dataflow import GB, RAM_USABLE
from advisor.engine.memory import memory_for
from tests.engine.profiles import synthetic_profile
from tests.engine.specs import GPU, spec

CPU2 = {"cpu_cores": 2, "ram_gb": 8}
PROFILE = synthetic_profile()
GPU_PROFILE = synthetic_profile(threads=1, kind="cuda")


@pytest.mark.parametrize(
    ("per_example", "chosen"),
    [
        ({16: 1.0, 32: 0.95, 64: 0.9}, 32),  # 0.95 is within 10% of 0.9; 1.0 is not
        ({16: 1.0, 32: 0.5, 64: 0.25}, 64),  # still halving: the largest
        ({16: 1.0, 32: 1.0, 64: 1.2}, 16),  # a tie: the smaller batch
        ({16: 2.0, 32: 1.0, 64: 1.5, 128: 1.05}, 32),  # the fastest in the middle
        ({128: 1.0}, 128),
    ],
)
def test_it_takes_the_smallest_batch_near_the_fastest(per_example: dict[int, float], chosen: int) -> None:
    assert smallest_near_fastest(per_example) == chosen


def _rule(candidate: dict[str, Any], rule: str) -> dict[str, Any] | None:
    return next((r for r in candidate["reasons"] if r["rule"] == rule), None)


def _allowed(s: dict[str, Any]) -> list[int]:
    # never above the rules' own start: the batch the same spec gets without a profile
    start = recommend(s)["candidates"][0]["training"]["batch_size"]
    return powers_of_two(BATCH_MIN, min(BATCH_MAX, int(s["data"]["examples"] * LARGE_BATCH_SHARE), start))


# (spec, profile, does batch.profiled choose the first candidate's batch)
CHOOSES = [
    (spec("tabular", [20], outputs=3, hardware=CPU2), PROFILE, True),
    (spec("vision", [1, 28, 28], outputs=10, hardware=CPU2), PROFILE, True),
    (spec("sequence", [50, 12], outputs=5, hardware=CPU2), PROFILE, True),
    (spec("generation", [20], generation="controlled", hardware=CPU2), PROFILE, True),
    (spec("tabular", [20], outputs=3, hardware=CPU2, examples=500), PROFILE, True),  # capped at 32
    (spec("tabular", [20], outputs=3, hardware=CPU2, examples=200), PROFILE, False),  # 10% < 16: no choice
    (spec("tabular", [20], outputs=3, hardware=CPU2), None, False),  # no profile: the rule's start
    (spec("vision", [1, 28, 28], outputs=10, hardware=GPU), GPU_PROFILE, True),
    (spec("vision", [1, 28, 28], outputs=10, hardware=GPU), PROFILE, False),  # a CPU's profile, a GPU plan
]


@pytest.mark.parametrize(("s", "profile", "chooses"), CHOOSES)
def test_it_chooses_the_batch_from_the_profile_where_it_speaks_for_the_plan(
    s: dict[str, Any], profile: Any, chooses: bool
) -> None:
    rec = recommend(s, profile=profile, device="vm0")
    first, plan = rec["candidates"][0], rec["hardware_plan"]
    chosen = first["training"]["batch_size"]
    reason = _rule(first, "batch.profiled")
    assert (reason is not None) == chooses
    assert (_rule(first, "batch.start") is None) == chooses
    assert first["estimate"]["batch_size"] == chosen
    if not chooses:
        return
    threads = plan["threads"] if plan["device"] == "cpu" else 1
    kind = "cpu" if plan["device"] == "cpu" else "cuda"
    sizes = _allowed(s)
    per_example = {
        b: step_cost(first, batch_size=b, threads=threads, profile=profile).seconds / b for b in sizes
    }
    best = min(per_example.values())
    assert chosen in sizes and per_example[chosen] <= best * (1 + BATCH_TOLERANCE)
    assert all(per_example[b] > best * (1 + BATCH_TOLERANCE) for b in sizes if b < chosen)
    assert first["memory_bytes"] == memory_for(first, batch_size=chosen, device=kind)
    assert "vm0 predicts" in reason["text"] and f"at {chosen}" in reason["text"]
    assert "Keskar" in reason["source"] and "Masters" in reason["source"]
    if plan["device"] == "cpu":  # the threads are the fastest at the chosen batch, and say so
        times = {t: step_cost(first, batch_size=chosen, threads=t, profile=profile).seconds for t in (1, 2)}
        assert plan["threads"] == min(times, key=times.__getitem__) and plan["threads_basis"] == "profiled"
        assert f"at batch {chosen}" in next(
            r["text"] for r in plan["reasons"] if r["rule"] == "cpu.threads.profiled"
        )


@pytest.mark.parametrize("ram_gb", [5e-5, 4e-5, 3e-5])
def test_it_never_chooses_a_batch_the_memory_cannot_hold(ram_gb: float) -> None:
    s = spec("tabular", [20], outputs=3, examples=100_000, hardware={"cpu_cores": 2, "ram_gb": ram_gb})
    first = recommend(s, profile=PROFILE, device="vm0")["candidates"][0]
    unlimited = recommend({**s, "hardware": CPU2}, profile=PROFILE, device="vm0")["candidates"][0]
    chosen = first["training"]["batch_size"]
    limit = RAM_USABLE * ram_gb * GB
    assert memory_for(unlimited, batch_size=unlimited["training"]["batch_size"])["total"] > limit  # it binds
    assert first["memory_bytes"]["total"] <= limit and chosen < unlimited["training"]["batch_size"]
    assert "would not fit" in next(r["text"] for r in first["reasons"] if r["rule"] == "batch.profiled")
    assert memory_for(first, batch_size=chosen * 2)["total"] > limit or chosen * 2 > BATCH_MAX


def test_a_memory_cut_on_the_gpu_stands() -> None:
    s = spec("vision", [3, 1024, 1024], outputs=10, hardware={**GPU, "gpu": "gtx-980"})
    first = recommend(s, profile=GPU_PROFILE, device="gpu0")["candidates"][0]
    assert _rule(first, "gpu.memory") is not None and _rule(first, "batch.profiled") is None


def _measured(threads: int | None, batch: int, best_batch: int | None) -> dict[str, Any]:
    at: dict[str, Any] = {"batch_size": batch, "threads": threads, "allocator": "default", "device": "vm0"}
    if best_batch is not None:
        at["best_batch"] = best_batch
    return {"basis": "measured", "calibration": 7, "measured_at": at}


BASE = recommend(spec("vision", [1, 28, 28], outputs=10, hardware=CPU2), profile=PROFILE, device="vm0")
PLANNED_BATCH = BASE["candidates"][0]["training"]["batch_size"]
PLANNED_THREADS = BASE["hardware_plan"]["threads"]
OTHER_THREADS = 3 - PLANNED_THREADS
OTHER_BATCH = PLANNED_BATCH // 2


# (measured estimate, followed threads, followed batch)
FOLLOWS = [
    (_measured(PLANNED_THREADS, PLANNED_BATCH, None), PLANNED_THREADS, PLANNED_BATCH),
    (_measured(OTHER_THREADS, PLANNED_BATCH, None), OTHER_THREADS, PLANNED_BATCH),
    (_measured(PLANNED_THREADS, OTHER_BATCH, OTHER_BATCH), PLANNED_THREADS, OTHER_BATCH),
    (_measured(OTHER_THREADS, OTHER_BATCH, OTHER_BATCH), OTHER_THREADS, OTHER_BATCH),
    (_measured(PLANNED_THREADS, OTHER_BATCH, None), PLANNED_THREADS, PLANNED_BATCH),  # only measured there
    (_measured(None, PLANNED_BATCH, PLANNED_BATCH), PLANNED_THREADS, PLANNED_BATCH),
]


@pytest.mark.parametrize(("measured", "threads", "batch"), FOLLOWS)
def test_the_recommendation_follows_what_a_calibration_measured(
    measured: dict[str, Any], threads: int, batch: int
) -> None:
    followed = follow_measurement(BASE, measured)
    plan, first = followed["hardware_plan"], followed["candidates"][0]
    assert (plan["threads"], first["training"]["batch_size"]) == (threads, batch)
    plan_rules = {r["rule"] for r in plan["reasons"]}
    if threads != PLANNED_THREADS:
        assert plan["threads_basis"] == "measured" and "plan.measured" in plan_rules
        assert not plan_rules & {"cpu.threads.physical", "cpu.threads.profiled"}
    else:
        assert plan == BASE["hardware_plan"]
    if batch != PLANNED_BATCH:
        reason = _rule(first, "plan.measured")
        assert (
            reason is not None and "calibration #7" in reason["text"] and str(PLANNED_BATCH) in reason["text"]
        )
        assert _rule(first, "batch.profiled") is None
        assert first["memory_bytes"] == memory_for(first, batch_size=batch)
    else:
        assert first == BASE["candidates"][0]
    # the stored recommendation is left as it was
    assert BASE["candidates"][0]["training"]["batch_size"] == PLANNED_BATCH
    assert BASE["hardware_plan"]["threads"] == PLANNED_THREADS


def test_a_gpu_plan_follows_the_batch_but_not_threads() -> None:
    rec = recommend(spec("vision", [1, 28, 28], outputs=10, hardware=GPU), profile=GPU_PROFILE, device="g0")
    planned = rec["candidates"][0]["training"]["batch_size"]
    followed = follow_measurement(rec, _measured(1, planned * 2, planned * 2))
    assert followed["hardware_plan"] == rec["hardware_plan"]
    assert followed["candidates"][0]["training"]["batch_size"] == planned * 2
    assert followed["candidates"][0]["memory_bytes"] == memory_for(
        followed["candidates"][0], batch_size=planned * 2, device="cuda"
    )


@pytest.mark.parametrize(
    ("s", "profile", "error", "interval"),
    [
        (
            spec("vision", [1, 28, 28], outputs=10, hardware=CPU2),
            PROFILE,
            0.55,
            "\N{MULTIPLICATION SIGN}0.74 to \N{MULTIPLICATION SIGN}1.5",
        ),
        # a GPU's profile carries its own band: its launch-bound points varied between profiles
        (
            spec("vision", [1, 28, 28], outputs=10, hardware=GPU),
            GPU_PROFILE,
            0.75,
            "\N{MULTIPLICATION SIGN}0.5 to \N{MULTIPLICATION SIGN}1.6",
        ),
    ],
)
def test_it_gives_a_profiled_estimate_the_band_of_its_device_kind(
    s: dict[str, Any], profile: Any, error: float, interval: str
) -> None:
    first = recommend(s, profile=profile, device="vm0")["candidates"][0]
    assert first["estimate"]["basis"] == "profiled"
    assert first["estimate"]["expected_error"] == error
    assert f"(profiled, 90% interval {interval})" in _rule(first, "batch.profiled")["text"]  # type: ignore[index]
