"""The early-stopping rule (Prechelt 1998): a fixed patience, and only substantial progress resets it."""

from __future__ import annotations

import pytest

from advisor.probe.learning.stopping import MIN_DELTA, MIN_GAIN, PATIENCE, Plateau


def _stops_at(history: list[tuple[float, float]], **kwargs: float) -> int | None:
    rule = Plateau(**kwargs)  # type: ignore[arg-type]
    for epoch, (score, loss) in enumerate(history, start=1):
        if rule.update(score, loss):
            return epoch
    return None


FLAT = [(0.9, 1.0)] * 40
# the loss creeps down by 0.03% an epoch: 0.6% over the patience, below the minimum gain
CREEPING = [(0.9, 1.0 * 0.9997**i) for i in range(60)]
# the loss falls by 2% an epoch: real progress every epoch
FALLING = [(0.9, 1.0 * 0.98**i) for i in range(60)]
# a confident classifier: the loss falls 5% per 15 epochs but from 0.05 nats, under the absolute minimum
CONFIDENT = [(1.0, 0.05 * 0.9966**i) for i in range(60)]
# 100 epochs of progress, then flat: the patience stays 20 (the old rule waited epoch/4 = 25 and more)
LONG = [(0.9, 10 * 0.98**i) for i in range(100)] + [(0.9, 10 * 0.98**99)] * 60
# the score improves once at epoch 15, after which nothing moves
LATE_SCORE = [(0.9, 1.0)] * 14 + [(0.95, 1.0)] + [(0.95, 1.0)] * 40
# a tie on score is not progress, a higher loss neither
TIES = [(0.9, 1.0)] + [(0.9, 1.2)] * 40
# the loss's small steps add up: 0.4% a epoch is 1% below the last progress every third epoch
SUMMED = [(0.9, 0.996**i) for i in range(30)]


@pytest.mark.parametrize(
    ("name", "history", "kwargs", "expected"),
    [
        ("flat stops after the patience", FLAT, {}, 1 + PATIENCE),
        ("creeping loss stops", CREEPING, {}, 1 + PATIENCE),
        ("falling loss keeps going", FALLING, {}, None),
        ("tiny absolute gains are no progress", CONFIDENT, {}, 1 + PATIENCE),
        ("no absolute minimum: tiny gains count", CONFIDENT, {"min_delta": 0.0}, None),
        ("a long run's patience does not grow", LONG, {}, 100 + PATIENCE),
        ("a better score resets the patience", LATE_SCORE, {}, 15 + PATIENCE),
        ("ties and worse losses are no progress", TIES, {}, 1 + PATIENCE),
        ("small gains that add up to the minimum count", SUMMED, {"patience": 5}, None),
        ("a shorter patience stops sooner", FLAT, {"patience": 5}, 6),
        ("no minimum gain: creeping counts", CREEPING, {"min_gain": 0.0, "min_delta": 0.0}, None),
    ],
)
def test_plateau_rule(
    name: str, history: list[tuple[float, float]], kwargs: dict[str, float], expected: int | None
) -> None:
    assert _stops_at(history, **kwargs) == expected, name


def test_creeping_loss_is_below_the_minimum_gain() -> None:
    # the table's "creeping" case is only meaningful while its per-epoch gain is below the rule's minimum
    assert 1 - 0.9997**PATIENCE < MIN_GAIN < 1 - 0.98


def test_confident_case_is_below_the_absolute_minimum() -> None:
    assert 0.05 * (1 - 0.9966**PATIENCE) < MIN_DELTA
