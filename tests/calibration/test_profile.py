"""profile_device(): thread counts are measured next to each other, and every count gets whole rates."""

from __future__ import annotations

import pytest
import torch

from advisor.calibration.profile import _Interleaved, profile_device, profile_in_child


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
    each = _Interleaved(counts, cpu=True)
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
        assert len(rates["linear"]) == 5 and all(s > 0 for _, s in rates["linear"])
        assert len(rates.get("conv1d", [])) == 4 and all(s > 0 for _, s in rates.get("conv1d", []))
        assert len(rates["whole_step_seconds"]) > 0 and rates["step_factor"] > 0
        assert rates["step_seconds"] > 0 and rates["sequence_exponent"] >= 0
    one, two = profile["threads"]["1"], profile["threads"]["2"]
    assert one["linear"] != two["linear"]  # measured at each count, not one count's points copied


def test_a_profile_that_outlasts_its_timeout_is_an_error_the_worker_survives() -> None:
    """A busy device can make the profiling child outlast its timeout: that is the RuntimeError the worker
    logs (profiles.profile_devices), not a TimeoutExpired that ends the worker."""
    with pytest.raises(RuntimeError, match="took longer than"):
        profile_in_child("cpu", threads=[1], timeout=0.01)
