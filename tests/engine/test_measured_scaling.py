"""Multi-device times: the W §III-H constant, or the efficiency a data-parallel calibration measured."""

from __future__ import annotations

import math
from typing import Any

import pytest

from advisor.engine import recommend, with_measured_scaling
from advisor.engine.estimate import MULTI_GPU_CUT, multi_gpu_factor, scaling_efficiency
from tests.engine.specs import GPU, spec


def _rows(*points: tuple[int, float]) -> list[dict[str, Any]]:
    return [{"world_size": w, "efficiency": e, "backend": "nccl"} for w, e in points]


@pytest.mark.parametrize(
    ("rows", "devices", "expected"),
    [
        (_rows((1, 1.0), (2, 0.9)), 2, (0.9, False)),  # measured at exactly that size
        (_rows((1, 1.0), (2, 0.9), (4, 0.7)), 4, (0.7, False)),
        (_rows((1, 1.0), (2, 0.9), (4, 0.7)), 3, (0.9 + (math.log2(3) - 1) * (0.7 - 0.9), False)),
        (_rows((1, 1.0), (4, 0.6)), 2, (0.8, False)),  # halfway in log2 between 1 and 4
        (_rows((1, 1.0), (2, 0.8)), 4, (0.64, True)),  # the loss per doubling carries on
        (_rows((1, 1.0), (2, 0.8)), 8, (0.8**3, True)),
        (_rows((1, 1.0), (4, 0.81)), 16, (0.81**2, True)),
        (_rows((2, 0.9), (1, 1.0)), 2, (0.9, False)),  # order does not matter
        (_rows((1, 1.0), (2, 1.1)), 2, (1.0, False)),  # never promised above 1
    ],
)
def test_it_reads_the_efficiency_at_the_plans_world_size(
    rows: list[dict[str, Any]], devices: int, expected: tuple[float, bool]
) -> None:
    found = scaling_efficiency(rows, devices)
    assert found is not None
    assert found[0] == pytest.approx(expected[0]) and found[1] == expected[1]


@pytest.mark.parametrize(
    "rows",
    [[], _rows((1, 1.0)), _rows((2, 1.0), (4, 0.9)), _rows((1, 1.0), (2, 0.0))],
)
def test_it_finds_nothing_in_rows_without_world_one_and_a_larger_one(rows: list[dict[str, Any]]) -> None:
    assert scaling_efficiency(rows, 4) is None


@pytest.mark.parametrize(
    ("devices", "efficiency"), [(1, None), (1, 0.5), (2, None), (4, None), (2, 0.9), (8, 0.5)]
)
def test_it_divides_the_time_by_devices_times_efficiency(devices: int, efficiency: float | None) -> None:
    factor = multi_gpu_factor(devices, efficiency)
    if devices == 1:
        assert factor == 1.0
    elif efficiency is None:
        assert factor == pytest.approx((1 - MULTI_GPU_CUT) ** math.log2(devices))
    else:
        assert factor == pytest.approx(1 / (devices * efficiency))


def _on_gpus(hours: float) -> dict[str, Any]:
    """ImageNet on up to 8 GPUs with a budget that needs several: a data-parallel plan."""
    rec = recommend(
        spec(
            "vision",
            [3, 224, 224],
            outputs=1000,
            examples=1_281_167,
            hardware={**GPU, "gpus_per_node": 8},
            target={"time_budget_hours": hours},
        )
    )
    assert rec["hardware_plan"]["parallelism"] == "data" and rec["hardware_plan"]["gpus"] > 1
    return rec


def _calibration(kind: str, rows: list[dict[str, Any]], job: int = 7) -> dict[str, Any]:
    return {"calibration": job, "device": f"box-{kind}0", "kind": kind, "rows": rows}


def test_it_says_the_constant_is_the_basis_until_something_is_measured() -> None:
    estimate = _on_gpus(3)["candidates"][0]["estimate"]
    assert estimate["scaling"]["basis"] == "W §III-H constant"
    assert estimate["scaling"]["cut_per_doubling"] == MULTI_GPU_CUT


@pytest.mark.parametrize(
    ("calibrations", "basis", "job"),
    [
        ([], "W §III-H constant", None),
        ([_calibration("cpu", _rows((1, 1.0), (2, 0.5)))], "W §III-H constant", None),  # a CPU's gloo
        ([_calibration("cuda", _rows((1, 1.0)))], "W §III-H constant", None),  # nothing beyond one
        ([_calibration("cuda", _rows((1, 1.0), (2, 0.5)))], "measured", 7),
        (
            [
                _calibration("cuda", _rows((1, 1.0), (2, 0.95)), 3),
                _calibration("cuda", _rows((1, 1.0), (2, 0.6)), 9),
            ],
            "measured",
            9,
        ),
        (
            [
                _calibration("cuda", _rows((1, 1.0), (2, 0.95)), 3),
                _calibration("cpu", _rows((1, 1.0), (2, 0.6)), 9),
            ],
            "measured",
            3,
        ),
    ],
)
def test_it_times_several_gpus_with_the_newest_gpu_measurement(
    calibrations: list[dict[str, Any]], basis: str, job: int | None
) -> None:
    rec = _on_gpus(3)
    before = rec["candidates"][0]["estimate"]
    after = with_measured_scaling(rec, 0, before, calibrations)
    assert after["scaling"]["basis"] == basis
    if job is None:
        assert after == before
        return
    efficiency = after["scaling"]["efficiency"]
    devices = before["devices"]
    assert after["scaling"]["calibration"] == job and after["scaling"]["device"] == "box-cuda0"
    compute = before["seconds_per_batch"] * before["batches_per_epoch"] / (devices * efficiency)
    assert after["compute_seconds_per_epoch"] == pytest.approx(compute)
    assert after["seconds_to_train"] == pytest.approx(
        after["seconds_per_epoch"] * rec["candidates"][0]["training"]["epochs"]
    )
    assert after["basis"] == before["basis"] and after["seconds_per_batch"] == before["seconds_per_batch"]


def test_it_leaves_a_one_device_estimate_alone() -> None:
    rec = recommend(spec("vision", [3, 32, 32], outputs=10, hardware=GPU))
    estimate = rec["candidates"][0]["estimate"]
    assert estimate["devices"] == 1 and "scaling" not in estimate
    assert (
        with_measured_scaling(rec, 0, estimate, [_calibration("cuda", _rows((1, 1.0), (2, 0.5)))]) == estimate
    )
