"""measure() trains every timed step on new values in the same batch memory: each tensor redrawn as
make_batch drew it (steps.Draw), in place (no allocation, so faults and peak memory are what a one-batch loop
costs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from advisor.calibration.steps import Draw, make_step
from tests.calibration import candidates as C

FAMILIES: list[tuple[str, Callable[[], dict[str, Any]]]] = [
    ("ffn", C.ffn),
    ("ae", C.ae),
    ("cnn", C.cnn),
    ("dn", C.dn),
    ("rnn", C.rnn),
    ("lstm tokens", C.lstm_tokens),
    ("gan", C.gan),
    ("vae", C.vae),
    ("rbm", C.rbm),
    ("dbn", C.dbn),
]


def _kind(t: torch.Tensor) -> str:
    if not t.is_floating_point():
        return "ids"
    if bool(((t == 0) | (t == 1)).all()):
        return "coins"
    return "unit" if float(t.min()) >= 0 and float(t.max()) < 1 else "normal"


@pytest.mark.parametrize(("name", "candidate"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_it_redraws_each_tensor_in_place_as_make_batch_drew_it(name: str, candidate: Any) -> None:
    step = make_step(candidate(), torch.device("cpu"))
    batch = step.make_batch(64)
    before = [t.clone() for t in batch]
    pointers = [t.data_ptr() for t in batch]
    step.refill(batch)
    for old, new, pointer in zip(before, batch, pointers, strict=True):
        assert new.data_ptr() == pointer and new.shape == old.shape and new.dtype == old.dtype
        assert not torch.equal(new, old)
        assert _kind(new) == _kind(old)
        if not new.is_floating_point():
            assert int(new.min()) >= 0 and int(new.max()) <= int(old.max())
    step.run(batch)  # still a valid batch for the family's step


def test_it_keeps_regression_targets_normal() -> None:
    cpu = torch.device("cpu")
    batch = (torch.rand(256, 4), torch.randn(256, 3))
    for draw, t in zip((Draw("unit", (4,), cpu), Draw("normal", (3,), cpu)), batch, strict=True):
        draw.again(t)
    assert float(batch[0].min()) >= 0 and float(batch[0].max()) < 1
    assert float(batch[1].min()) < 0 < float(batch[1].max())
    assert abs(float(batch[1].mean())) < 0.2 and 0.8 < float(batch[1].std()) < 1.2
