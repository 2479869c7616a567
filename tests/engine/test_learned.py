"""The learned correction must earn its place: fitted for real (scikit-learn) on rows built so that it is
better, or worse, than the profile alone with each network left out; only a better one times estimates, and
the estimate says which timed it and why."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from advisor.engine import recommend
from advisor.engine.costmodel import step_cost
from advisor.engine.learned import cross_predict, fit_correction, quantile, rows_features
from tests.engine.profiles import synthetic_profile
from tests.engine.specs import spec

PROFILE = synthetic_profile()
CPU2 = {"cpu_cores": 2, "ram_gb": 8}
# eight networks the engine proposes for tabular data of growing width
NETWORKS = [
    recommend(spec("tabular", [width], outputs=4, hardware=CPU2))["candidates"][0]
    for width in (8, 16, 32, 64, 128, 256, 512, 1024)
]


def _rows(ratio: Any) -> list[tuple[str, dict[str, Any], int, int, float]]:
    """Every network at batches 16, 64, 256 and 1-2 threads, measured `ratio(network index, batch, threads)`
    times its profiled seconds."""
    rows = []
    for i, candidate in enumerate(NETWORKS):
        for batch in (16, 64, 256):
            for threads in (1, 2):
                profiled = step_cost(candidate, batch_size=batch, threads=threads, profile=PROFILE).seconds
                rows.append((f"net{i}", candidate, batch, threads, ratio(i, batch, threads) * profiled))
    return rows


def test_a_correction_that_learns_what_the_profile_misses_is_used() -> None:
    """Real steps at 1.6x the profile on one thread and 1.2x on two (a step factor the profile got wrong):
    with each network left out the correction still learns it."""
    rng = random.Random(0)
    correction = fit_correction(
        _rows(lambda i, b, t: (1.6 if t == 1 else 1.2) * rng.uniform(0.98, 1.02)), PROFILE
    )
    assert correction is not None
    v = correction.validation
    assert v["used"] and v["median_error"] < v["profile_median_error"]
    assert v["profile_median_error"] > 0.15 and v["median_error"] < 0.05
    assert (v["rows"], v["networks"]) == (48, 8)
    assert v["ratio_low"] < 1.0 < v["ratio_high"]
    first = recommend(
        spec("tabular", [48], outputs=4, hardware=CPU2), profile=PROFILE, device="vm0", correction=correction
    )
    estimate = first["candidates"][0]["estimate"]
    assert estimate["basis"] == "predicted" and estimate["correction"]["used"] is True
    assert estimate["correction"]["text"].startswith("The learned correction times this: on 48 reliable")
    low, high = estimate["interval"]["seconds_per_batch"]
    assert low == pytest.approx(v["ratio_low"] * estimate["seconds_per_batch"])
    assert high == pytest.approx(v["ratio_high"] * estimate["seconds_per_batch"])


def test_a_correction_worse_than_the_profile_is_not_used() -> None:
    """The profile is right within 2% for every network but one, whose real steps run 3x (something no
    feature explains). Fitted with that network, the correction lifts its neighbours: left out, each network
    is predicted worse than by the profile alone, so the profile stands and the estimate says why."""
    rng = random.Random(1)
    correction = fit_correction(
        _rows(lambda i, b, t: (3.0 if i == 4 else 1.0) * rng.uniform(0.98, 1.02)), PROFILE
    )
    assert correction is not None
    v = correction.validation
    assert not v["used"] and v["median_error"] >= v["profile_median_error"]
    assert v["profile_median_error"] < 0.02
    first = recommend(
        spec("tabular", [48], outputs=4, hardware=CPU2), profile=PROFILE, device="vm0", correction=correction
    )
    estimate = first["candidates"][0]["estimate"]
    plain = recommend(spec("tabular", [48], outputs=4, hardware=CPU2), profile=PROFILE, device="vm0")
    assert estimate["basis"] == "profiled"
    assert estimate["seconds_per_batch"] == plain["candidates"][0]["estimate"]["seconds_per_batch"]
    assert estimate["correction"]["used"] is False
    assert estimate["correction"]["text"].startswith("The profile times this, not the learned correction")
    assert estimate["interval"] == plain["candidates"][0]["estimate"]["interval"]


def test_too_few_rows_or_networks_fit_nothing() -> None:
    rows = _rows(lambda i, b, t: 1.5)
    assert fit_correction(rows[:7], PROFILE) is None  # fewer than 8 rows
    assert fit_correction([r for r in rows if r[0] in ("net0", "net1")], PROFILE) is None  # 2 networks


def test_cross_prediction_never_sees_the_left_out_group() -> None:
    """Each network's prediction comes from a correction fitted on the others only: a network whose ratio
    is unlike every other's is predicted at the others' ratio, not its own."""
    rows = _rows(lambda i, b, t: 5.0 if i == 0 else 1.0)
    x = rows_features([(c, b, t) for _, c, b, t, _ in rows], PROFILE)
    measured = [m for *_, m in rows]
    predicted = cross_predict(x, measured, [key for key, *_ in rows], max_folds=8)
    ratios = [p / math.exp(row[0]) for p, row in zip(predicted, x, strict=True)]
    assert [r for (key, *_), r in zip(rows, ratios, strict=True) if key == "net0"] == pytest.approx([1.0] * 6)


@pytest.mark.parametrize(("q", "value"), [(0.0, 1.0), (0.05, 1.2), (0.5, 3.0), (0.95, 4.8), (1.0, 5.0)])
def test_quantiles_interpolate_between_order_statistics(q: float, value: float) -> None:
    assert quantile([5.0, 1.0, 3.0, 2.0, 4.0], q) == pytest.approx(value)
