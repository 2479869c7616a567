"""`python -m bench epoch`: predicted against actual time of one training epoch, for several families.

For each reference network (advisor.calibration.examples): measure() gives seconds per batch; the prediction
is that times the batches of an epoch (advisor.calibration.epoch); then one real epoch is trained over an
in-memory synthetic data set (shuffled, each batch gathered by index). The data set is sized so that an epoch
takes about --epoch-seconds. Prediction and epoch alternate for --rounds rounds and the table shows the median
error; "ctrl" is the spread of the epoch against a second epoch in the same round (how finely the machine
resolves a difference now). The target is within 10%.
"""

from __future__ import annotations

import math
import statistics
import textwrap
from typing import Any

from advisor.calibration import measure
from advisor.calibration.epoch import loading_seconds_per_batch, predicted_epoch_seconds, train_one_epoch
from advisor.calibration.examples import EXAMPLES
from bench.harness import chosen_networks, network_parser

DEFAULT_NETWORKS = "tabular-mlp,mnist-mlp,mnist-cnn,text-lstm,mnist-ae,mnist-gan,mnist-rbm"


def compare(name: str, threads: int, rounds: int, epoch_seconds: float, min_seconds: float) -> dict[str, Any]:
    candidate = EXAMPLES[name]()
    batch = int(candidate["training"]["batch_size"])
    probe = measure(candidate, batch_size=batch, threads=threads, min_seconds=0.3)
    batches = min(2000, max(20, math.ceil(epoch_seconds / probe["seconds_per_batch"])))
    examples = batches * batch - batch // 2  # a partial last batch, as real data sets have
    rows: list[dict[str, float]] = []
    for _ in range(rounds):
        m = measure(candidate, batch_size=batch, threads=threads, min_seconds=min_seconds)
        epoch = train_one_epoch(candidate, examples=examples, batch_size=batch, threads=threads)
        actual = epoch["seconds"]
        again = train_one_epoch(candidate, examples=examples, batch_size=batch, threads=threads)["seconds"]
        median_pred = predicted_epoch_seconds(m["seconds_per_batch"], examples, batch)
        load = loading_seconds_per_batch(candidate, batch_size=batch, examples=examples, threads=threads)
        mean_pred = predicted_epoch_seconds(m["mean_seconds_per_batch"] + load, examples, batch)
        step_cpu = m["user_seconds_per_step"] + m["system_seconds_per_step"]
        cpu_pred = predicted_epoch_seconds(step_cpu + load, examples, batch)
        rows.append(
            {
                "seconds_per_batch": m["seconds_per_batch"],
                "predicted": median_pred,
                "predicted_mean": mean_pred,
                "actual": actual,
                "error": median_pred / actual - 1.0,
                "error_mean": mean_pred / actual - 1.0,
                "control": again / actual - 1.0,
                "error_cpu": cpu_pred / epoch["cpu_seconds"] - 1.0,
                "load_ms": load * 1e3,
            }
        )
    summary: dict[str, Any] = {
        "network": name,
        "family": candidate["family"],
        "examples": examples,
        "batch": batch,
    }
    for key in rows[0]:
        summary[key] = statistics.median(r[key] for r in rows)
    controls = [r["control"] for r in rows]
    q1, _, q3 = statistics.quantiles(controls, n=4) if rounds > 1 else (0.0, 0.0, 0.0)
    summary["control"] = q3 - q1
    return summary


def main(argv: list[str]) -> int:
    parser = network_parser("epoch", __doc__ or "", networks=DEFAULT_NETWORKS, threads="1", rounds=3)
    parser.add_argument("--epoch-seconds", type=float, default=2.0)
    parser.add_argument("--min-seconds", type=float, default=1.0, help="measure()'s min_seconds")
    parser.add_argument("--quick", action="store_true", help="three small networks, 1 thread, short epochs")
    args = parser.parse_args(argv)
    if args.quick:
        args.networks, args.threads, args.epoch_seconds, args.rounds = (
            "tabular-mlp,mnist-cnn,mnist-gan",
            "1",
            1.0,
            3,
        )
    names, threads = chosen_networks(parser, args)
    print(f"predicted (measure() x batches) vs one real epoch; medians over {args.rounds} alternating rounds")
    header = (
        f"{'network':<12} {'family':<6} {'examples':>8} {'batch':>5} {'thr':>3} {'s/batch':>9} "
        f"{'pred s':>8} {'actual s':>8} {'error':>7} {'pred(mean)':>10} {'error':>7} {'ctrl':>6} "
        f"{'cpu err':>7}"
    )
    print(header)
    print("-" * len(header))
    worst, worst_mean, worst_cpu = 0.0, 0.0, 0.0
    for name in names:
        for t in threads:
            r = compare(name, t, args.rounds, args.epoch_seconds, args.min_seconds)
            worst = max(worst, abs(r["error"]))
            worst_mean = max(worst_mean, abs(r["error_mean"]))
            worst_cpu = max(worst_cpu, abs(r["error_cpu"]))
            print(
                f"{r['network']:<12} {r['family']:<6} {r['examples']:>8} {r['batch']:>5} {t:>3} "
                f"{r['seconds_per_batch']:>9.5f} {r['predicted']:>8.3f} {r['actual']:>8.3f} "
                f"{r['error']:>+7.1%} {r['predicted_mean']:>10.3f} {r['error_mean']:>+7.1%} "
                f"{r['control']:>6.1%} {r['error_cpu']:>+7.1%}",
                flush=True,
            )
    print(
        f"\nworst |error| {worst:.1%} from the median step, {worst_mean:.1%} from the mean step, "
        f"{worst_cpu:.1%} in CPU time (target < 10%)"
    )
    notes = (
        "pred: seconds_per_batch (median) x batches. pred(mean): (mean step + gathering one batch) x batches,"
        " which charges stalls and the input pipeline as an epoch does. ctrl: IQR of the epoch against a"
        " second epoch in the same round (the machine's resolution). cpu err: the same prediction in CPU"
        " seconds (measure()'s user+system per step, plus gathering) against the epoch's CPU seconds, which"
        " other processes' load does not inflate."
    )
    print(textwrap.fill(notes, width=110))
    return 0
