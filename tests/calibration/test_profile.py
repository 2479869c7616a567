"""profile_device(): thread counts are measured next to each other, every count gets whole rates, and the
profile says what it saw of other work meanwhile."""

from __future__ import annotations

import pytest
import torch

from advisor.calibration.points import Interleaved, product_work, profile_scale, weight_work
from advisor.calibration.profile import (
    CONV_SIZES,
    CONV_TRANSPOSE_SIZES,
    LINEAR_SIZES,
    PARAMETERS,
    POOL_SIZES,
    THIN_LINEAR,
    profile_device,
    profile_in_child,
)
from advisor.engine.layercost import CPU_CHANNEL_BLOCK


@pytest.mark.parametrize(
    ("counts", "orders"),
    [
        ([1, 2], [[1, 2], [2, 1], [1, 2], [2, 1]]),  # ABBA: a steady drift in load falls on both alike
        ([1, 2, 3], [[1, 2, 3], [3, 2, 1], [1, 2, 3], [3, 2, 1]]),
        ([1], [[1], [1], [1], [1]]),
    ],
)
def test_it_measures_each_point_at_every_count_in_alternating_order(
    counts: list[int], orders: list[list[int]]
) -> None:
    previous = torch.get_num_threads()
    each = Interleaved(counts, cpu=True)
    seen: list[list[int]] = []
    try:
        for _ in orders:
            point: list[int] = []

            def run(point: list[int] = point) -> float:
                point.append(torch.get_num_threads())  # the count torch runs at while the point is timed
                return float(torch.get_num_threads())

            assert each(run) == {c: float(c) for c in counts}
            seen.append(point)
    finally:
        torch.set_num_threads(previous)
    assert seen == orders


def test_every_thread_count_gets_a_complete_profile_with_its_own_factor() -> None:
    profile = profile_device("cpu", threads=[1, 2])
    assert sorted(profile["threads"]) == ["1", "2"]
    for rates in profile["threads"].values():
        # the products and the thin one, keyed by their work (FLOPs and the weights' cost), in order
        assert len(rates["linear"]) == len(LINEAR_SIZES) + 1 and all(s > 0 for _, s in rates["linear"])
        works = [w for w, _ in rates["linear"]]
        assert works == sorted(works) and 0 <= rates.get("product_weight_work", -1) <= LINEAR_SIZES[-1][0] / 2
        assert len(rates.get("conv1d", [])) == 4 and all(s > 0 for _, s in rates.get("conv1d", []))
        # transposed convolutions on their own curve, every convolution at its work in channel blocks
        transposed = rates.get("conv_transpose", [])
        assert len(transposed) == len(CONV_TRANSPOSE_SIZES) and all(s > 0 for _, s in transposed)
        assert rates.get("channel_block") == CPU_CHANNEL_BLOCK
        # max-pools on their own curve, at their input's values (version 11)
        pools = rates.get("pool", [])
        assert [w for w, _ in pools] == [float(b * ch * side * side) for b, ch, side in POOL_SIZES]
        assert all(s > 0 for _, s in pools)
        works = [w for w, _ in rates["conv"]]
        assert works == sorted(works)
        b, ci, co, side = CONV_SIZES[
            0
        ]  # 1 -> 8 channels: 8 padded to 16 twice, 1 to 16 for its input's gradient
        assert (ci, co) == (1, 8)
        assert any(w == pytest.approx(2.0 * b * co * side * side * ci * 9 * (2 + 2 + 16) / 3) for w in works)
        # the cells again over 128 steps, at the same sizes
        assert [w for w, _ in rates.get("recurrent_long", [])] == [w for w, _ in rates["recurrent"]]
        assert [w for w, _ in rates.get("rnn_long", [])] == [w for w, _ in rates["rnn"]]
        assert [p for p, _ in rates["optimizer"]["adam"]] == [float(p) for p in PARAMETERS]
        assert len(rates["whole_step_seconds"]) > 0 and rates["step_factor"] > 0
        assert rates["step_seconds"] > 0 and rates["sequence_exponent"] >= 0
    one, two = profile["threads"]["1"], profile["threads"]["2"]
    assert one["linear"] != two["linear"]  # measured at each count, not one count's points copied
    # what was seen of other work: figures, and the reasons (if any) it is not trusted
    contention = profile.get("contention")
    assert contention is not None and contention["samples"] > 10
    assert isinstance(profile.get("unreliable_reasons"), list)


@pytest.mark.parametrize(
    ("thin", "thick", "expected"),
    [
        (1.0, 16.0, "read"),  # (16 + k) / (512 + k) = 1/16: k = 256 / 15
        (2.5, 20.0, "read"),
        (19.0, 20.0, 128.0),  # barely faster: clamped at half the thick batch
        (20.0, 20.0, 0.0),  # no faster with 8 examples than with 256: a burst, not weights
        (30.0, 20.0, 0.0),
        (0.1, 20.0, 0.0),  # faster than its FLOPs alone allow: clamped at 0
    ],
)
def test_the_weights_cost_is_read_from_a_thin_and_a_thick_product(
    thin: float, thick: float, expected: str | float
) -> None:
    b1, b2 = THIN_LINEAR[0], LINEAR_SIZES[-1][0]
    k = weight_work(thin, thick, b1, b2)
    if expected == "read":  # the ratio it was read from holds
        assert (2 * b1 + k) / (2 * b2 + k) == pytest.approx(thin / thick)
    else:
        assert k == expected
    assert product_work((b1, 1024, 1024), k) == pytest.approx(2 * b1 * 1024 * 1024 + k * (1024 * 1024 + 1024))


def test_a_profile_that_outlasts_its_timeout_is_an_error_the_worker_survives() -> None:
    """A busy device can make the profiling child outlast its timeout: that is the RuntimeError the worker
    logs (profiling.profile_devices), not a TimeoutExpired that ends the worker."""
    with pytest.raises(RuntimeError, match="took longer than"):
        profile_in_child("cpu", threads=[1], timeout=0.01)


def test_a_profile_past_its_budget_times_the_rest_once_and_says_it_hurried() -> None:
    """A worker waits a fixed time for its profile; on a busy machine the profile hurries instead of being
    killed, so the worker starts with an untrusted profile rather than none."""
    hurried = profile_device("cpu", threads=[1], budget=0.0)
    rates = hurried["threads"]["1"]
    assert all(s > 0 for _, s in rates["linear"]) and rates["step_factor"] > 0
    assert "hurried" in [r["code"] for r in hurried["unreliable_reasons"]]
    in_time = profile_device("cpu", threads=[1])
    assert "hurried" not in [r["code"] for r in in_time["unreliable_reasons"]]


@pytest.mark.parametrize(("raw", "scale"), [("", 1.0), ("0.25", 0.25), ("1", 1.0)])
def test_the_profiles_lengths_scale_by_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str, scale: float
) -> None:
    monkeypatch.setenv("ADVISOR_PROFILE_SCALE", raw)
    assert profile_scale() == scale


@pytest.mark.parametrize("raw", ["0", "-1", "2", "short"])
def test_a_scale_outside_zero_to_one_is_refused(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("ADVISOR_PROFILE_SCALE", raw)
    with pytest.raises(ValueError, match="ADVISOR_PROFILE_SCALE"):
        profile_scale()
