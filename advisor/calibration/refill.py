"""New synthetic data in a batch's own memory, between timed steps.

Repeating one batch is a bias: data-dependent kernels (ReLU, max-pooling, the loss) learn the repeated
pattern, and a small CNN's step ran 3-9% faster on one repeated batch than on new data (bench/README.md,
"harness"). Allocating a new batch each step instead changes the allocator's traffic, and so the page faults,
system time and peak memory that measure() reports. Refilling in place does neither: same tensors, new values
of the kinds steps.make_batch draws."""

from __future__ import annotations

from collections.abc import Callable

import torch

from advisor.calibration.steps import Batch


def refiller(batch: Batch) -> Callable[[], None]:
    """A function that redraws every tensor of `batch` in place, each as make_batch drew it: integer ids or
    labels uniformly below the largest seen (+1), 0/1 targets as fair coins, [0, 1) inputs uniformly, anything
    else (regression targets) from a standard normal."""
    kinds: list[tuple[str, torch.Tensor, int]] = []
    for t in batch:
        if not t.is_floating_point():
            kinds.append(("ids", t, int(t.max()) + 1 if t.numel() else 1))
        elif t.numel() and bool(((t == 0) | (t == 1)).all()):
            kinds.append(("coins", t, 0))
        elif t.numel() and float(t.min()) >= 0.0 and float(t.max()) < 1.0:
            kinds.append(("unit", t, 0))
        else:
            kinds.append(("normal", t, 0))

    def refill() -> None:
        for kind, t, high in kinds:
            if kind == "ids":
                t.random_(0, high)
            elif kind == "coins":
                t.bernoulli_(0.5)
            elif kind == "unit":
                t.uniform_(0.0, 1.0)
            else:
                t.normal_()

    return refill
