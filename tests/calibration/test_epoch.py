"""A measured step, times the batches of an epoch, predicts a real epoch of training."""

from __future__ import annotations

import statistics

from advisor.calibration import measure
from advisor.calibration.epoch import loading_seconds_per_batch, predicted_epoch_seconds, train_one_epoch
from tests.calibration import candidates as C


def test_it_counts_a_partial_last_batch_in_proportion() -> None:
    assert predicted_epoch_seconds(0.5, examples=1000, batch_size=100) == 5.0
    assert predicted_epoch_seconds(0.5, examples=1050, batch_size=100) == 5.25


def test_it_trains_every_batch_of_the_epoch() -> None:
    r = train_one_epoch(C.ffn(), examples=100, batch_size=16, threads=1, warmup=0)
    assert r["batches"] == 7
    assert r["seconds"] > 0


def test_it_predicts_one_epoch_within_10_percent() -> None:
    """Prediction ((measure()'s mean step + gathering a batch) x batches) against one real epoch over an
    in-memory data set.

    As in the agreement test, rounds alternate, and each round repeats both timings as a control (a second
    prediction against the first, a second epoch against the first). The tolerance is 10%, widened to twice
    the controls' interquartile spread when the shared machine cannot resolve 10% right now. Forgetting the
    partial batch, timing the wrong step, or a step unlike real training exceeds it; a burst of load does
    not."""
    cand = C.cnn()
    batch, examples = 32, 32 * 60 - 16
    errors, control = [], []

    def predict() -> float:
        m = measure(cand, batch_size=batch, threads=1, min_seconds=0.2, warmup=2)
        load = loading_seconds_per_batch(cand, batch_size=batch, examples=examples, threads=1)
        return predicted_epoch_seconds(m["mean_seconds_per_batch"] + load, examples, batch)

    def epoch() -> float:
        return float(train_one_epoch(cand, examples=examples, batch_size=batch, threads=1)["seconds"])

    for _ in range(5):
        predicted, actual = predict(), epoch()
        errors.append(predicted / actual - 1.0)
        control += [predict() / predicted - 1.0, epoch() / actual - 1.0]
    q1, _, q3 = statistics.quantiles(control, n=4)
    assert abs(statistics.median(errors)) < max(0.10, 2 * (q3 - q1)), (errors, control)
