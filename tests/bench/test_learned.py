"""`python -m bench learned`'s stages, on rows built from the synthetic profile (no measuring): the gated
correction's held-out error against the profile's, unreliable rows left out of the fit."""

from __future__ import annotations

from typing import Any

from advisor.engine.costmodel import step_cost
from bench.learned import stage
from bench.predict_grid import grid_networks
from tests.engine.profiles import synthetic_profile

PROFILE = synthetic_profile()
NETWORKS = dict(grid_networks(1))


def _calibration(name: str, factor: float, *, unreliable: bool = False) -> list[dict[str, Any]]:
    rows = []
    for batch in (16, 64):
        for threads in (1, 2):
            seconds = step_cost(NETWORKS[name], batch_size=batch, threads=threads, profile=PROFILE).seconds
            rows.append(
                {
                    "network": name,
                    "batch": batch,
                    "threads": threads,
                    "measured": factor * seconds,
                    "loaded": unreliable,
                    "unreliable": unreliable,
                    "reasons": ["runnable"] if unreliable else [],
                }
            )
    return rows


def test_a_stage_uses_a_correction_that_helps_and_leaves_unreliable_rows_out() -> None:
    names = list(NETWORKS)
    calibrated = [_calibration(n, 1.5) for n in names[:4]] + [_calibration(names[4], 30.0, unreliable=True)]
    held_out = [r for n in names[6:8] for r in _calibration(n, 1.5)]
    found = stage(calibrated, held_out, NETWORKS, PROFILE)
    assert (found["rows"], found["unreliable_rows_left_out"], found["loaded_calibrations"]) == (16, 4, 1)
    assert found["used"] and found["gated_median_error"] < found["profile_median_error"]
    assert found["within_target"] and found["held_out_rows"] == 8


def test_a_stage_keeps_the_profile_where_the_correction_does_not_earn_its_place() -> None:
    names = list(NETWORKS)
    calibrated = [_calibration(n, 3.0 if i == 1 else 1.0) for i, n in enumerate(names[:4])]
    held_out = [r for n in names[6:8] for r in _calibration(n, 1.0)]
    found = stage(calibrated, held_out, NETWORKS, PROFILE)
    assert not found["used"] and found["gated_median_error"] == found["profile_median_error"] == 0.0
    assert found["points_worse"] == 0.0 and found["within_target"]
