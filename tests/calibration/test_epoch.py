"""A measured step, times the batches of an epoch, predicts a real epoch of training."""

from __future__ import annotations

import itertools
import statistics

from advisor.calibration import measure
from advisor.calibration.contention import Probe, judge
from advisor.calibration.epoch import loading_seconds_per_batch, predicted_epoch_seconds, train_one_epoch
from tests.calibration import candidates as C

# what measure() says when other work took the CPUs (advisor.calibration.contention.judge)
LOAD_CODES = {"cpu_share", "runnable", "steal", "throttled"}


def test_it_counts_a_partial_last_batch_in_proportion() -> None:
    assert predicted_epoch_seconds(0.5, examples=1000, batch_size=100) == 5.0
    assert predicted_epoch_seconds(0.5, examples=1050, batch_size=100) == 5.25


def test_it_trains_every_batch_of_the_epoch() -> None:
    r = train_one_epoch(C.ffn(), examples=100, batch_size=16, threads=1, warmup=0)
    assert r["batches"] == 7
    assert r["seconds"] > 0


def test_it_predicts_one_epoch_within_10_percent() -> None:
    """Prediction ((measure()'s mean step + gathering a batch) x batches) against real epochs over an
    in-memory data set.

    This machine's speed drifts by a quarter within seconds (bench/results/epoch_amd-epyc-2c/README.md), so
    each epoch is compared with the mean of the predictions made just before and just after it, which
    cancels a steady drift. The tolerance is 10%, widened to the interquartile spread of successive
    predictions against each other when the machine cannot resolve 10% right now, but never past 25%: timing
    the wrong step (forward only, one network of two) or counting batches wrongly still fails.

    Only epochs between two predictions that measure() trusted are scored, as the product publishes only
    those. With three CPU-bound processes beside it on this 2-core VM, the epochs ran 63-70% longer than the
    predictions beside them: the process got a quarter of a CPU in the epoch and 90% in measure()'s loop,
    and measure() marked every one of them (`runnable`). Where the machine stays that busy, the test asks
    that each prediction was marked for the load, which is what keeps such a figure off a headline.

    The epoch itself is judged by the same signals as measure()'s loop (contention.judge over its CPU time,
    steal and runnable tasks): an epoch that waited for a CPU says nothing of the prediction. Without that,
    one CI run scored epochs 10-23% longer than the trusted predictions beside them (median -17%, control
    spread 10%) and failed, with no figure to tell whether the epochs had lost the CPU."""
    cand = C.cnn()
    batch, examples = 32, 32 * 120 - 16

    def predict() -> tuple[float, list[str]]:
        m = measure(cand, batch_size=batch, threads=1, min_seconds=0.2, warmup=2)
        load = loading_seconds_per_batch(cand, batch_size=batch, examples=examples, threads=1)
        seconds = predicted_epoch_seconds(m["mean_seconds_per_batch"] + load, examples, batch)
        return seconds, [r["code"] for r in m["unreliable_reasons"]]

    def epoch() -> tuple[float, list[str]]:
        probe = Probe()
        probe.start()
        r = train_one_epoch(cand, examples=examples, batch_size=batch, threads=1)
        seen = probe.finish(cpu_seconds=r["cpu_seconds"], timed_seconds=r["seconds"], threads=1)
        reasons = judge(seen, halfwidth=0.0, timed_seconds=r["seconds"], iterations=r["batches"])
        return float(r["seconds"]), [x["code"] for x in reasons]

    predictions, errors, epochs = [predict()], [], []
    for _ in range(12):
        actual, doubts = epoch()
        epochs.append((round(actual, 3), doubts))
        predictions.append(predict())
        (before, doubts_before), (after, doubts_after) = predictions[-2:]
        if not doubts_before and not doubts_after and not doubts:
            errors.append((before + after) / 2 / actual - 1.0)
        if len(errors) == 7:
            break
    if len(errors) < 3:  # busy throughout: every prediction and epoch it could not trust says why
        doubted = [codes for _, codes in predictions if codes] + [codes for _, codes in epochs if codes]
        assert all(LOAD_CODES & set(codes) for codes in doubted), doubted
        return
    control = [b / a - 1.0 for (a, _), (b, _) in itertools.pairwise(predictions)]
    q1, _, q3 = statistics.quantiles(control, n=4)
    assert abs(statistics.median(errors)) < min(0.25, max(0.10, q3 - q1)), (errors, control, epochs)


def test_a_sweeps_gathering_starts_no_gather_after_its_time() -> None:
    """A clock that moves 1 s at each reading: the gathers stop at the first reading past 2.5 s (three of
    them), where 200 would run otherwise; the seconds per gather are the time taken over those three."""
    ticks = itertools.count()

    def clock() -> float:
        return float(next(ticks))

    cand, batch = C.ffn(), 16
    bounded = loading_seconds_per_batch(
        cand, batch_size=batch, examples=4096, threads=1, max_seconds=2.5, clock=clock
    )
    assert bounded == 4.0 / 3  # readings: 0 at the start, 1, 2, 3 after each gather, 4 at the end
    ticks = itertools.count()
    whole = loading_seconds_per_batch(cand, batch_size=batch, examples=4096, threads=1, clock=clock)
    assert whole == 1.0 / 200  # read only at the start and the end: every one of its 200 gathers
