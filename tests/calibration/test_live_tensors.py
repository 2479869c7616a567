"""LiveTensors: the peak of live tensor bytes as PyTorch's dispatcher sees them, storages counted once."""

from __future__ import annotations

import torch

from advisor.calibration.memory import LiveTensors, live_tensor_peak

MB = 1 << 20


def test_it_counts_each_storage_once_until_it_is_freed() -> None:
    tracker = LiveTensors()
    with tracker:
        a = torch.ones(MB // 4)  # 1 MiB of float32
        view = a[: MB // 8]  # a view: the same storage
        b = view * 2  # 0.5 MiB, new
        assert tracker.live == MB + MB // 2
        del a, view  # the storage goes with its last reference: the finalizer takes it off
        assert tracker.live == MB // 2
    assert tracker.peak == MB + MB // 2
    assert b.numel() == MB // 8


def test_the_step_peak_counts_what_the_step_touches_and_its_temporaries() -> None:
    weight = torch.zeros(MB // 4)  # made before: counted once the step touches it

    def step() -> None:
        temporary = weight + 1  # 1 MiB, freed at the end of the step
        (temporary * 2).sum()  # another 1 MiB for a moment

    # the weight, both temporaries and the sum, computed while the product is still alive
    assert live_tensor_peak(step) == 3 * MB + 4
