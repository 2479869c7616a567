"""`python -m bench epoch`: predicted against actual time of one training epoch, for several families.

For each reference network (bench/examples.py): measure() times steps (its stopping rule and
contention signals included); each candidate statistic of those steps plus the time to gather a batch from
memory, times the batches of an epoch (advisor.calibration.epoch), is set beside one real epoch trained over
an in-memory synthetic data set (shuffled, each batch gathered by index), sized so that an epoch takes about
--epoch-seconds. Prediction and epoch alternate for --rounds rounds; "ctrl" is the spread of the epoch
against a second epoch in the same round (how finely the machine resolves a difference now).

The headline (engine.robust.headline_step, what a calibration publishes) is withheld where measure() marked
the configuration unreliable. With --load N, N CPU-bound processes start halfway through each measurement
(the first, unloaded measurement's duration tells when) and stop when it ends: the epochs run without them,
so a headline under load is judged against what the machine really does. Target: every headline within
±15% of the real epoch, or withheld with its reason. --out writes result.json and table.txt.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import textwrap
import time
from pathlib import Path
from typing import Any

from advisor.calibration import measure
from advisor.calibration.epoch import loading_seconds_per_batch, predicted_epoch_seconds, train_one_epoch
from advisor.engine.robust import HEADLINE_STATISTIC, headline_step, step_statistics
from bench.examples import EXAMPLES
from bench.harness import chosen_networks, network_parser
from bench.load import contention_signals, start_load, stop_load
from bench.machine import describe, finish

DEFAULT_NETWORKS = "tabular-mlp,mnist-mlp,mnist-cnn,text-lstm,mnist-ae,mnist-gan,mnist-rbm"
TARGET = 0.15


def compare(
    name: str, threads: int, rounds: int, epoch_seconds: float, min_seconds: float, load: int
) -> dict[str, Any]:
    candidate = EXAMPLES[name]()
    batch = int(candidate["training"]["batch_size"])
    started = time.perf_counter()
    probe = measure(candidate, batch_size=batch, threads=threads, min_seconds=0.3)
    delay = (time.perf_counter() - started) / 2  # halfway through a measurement of about this length
    batches = min(2000, max(20, math.ceil(epoch_seconds / probe["seconds_per_batch"])))
    examples = batches * batch - batch // 2  # a partial last batch, as real data sets have
    rows: list[dict[str, Any]] = []
    for _ in range(rounds):
        competing = start_load(load, delay)
        try:
            m = measure(candidate, batch_size=batch, threads=threads, min_seconds=min_seconds)
        finally:
            stop_load(competing)
        epoch = train_one_epoch(candidate, examples=examples, batch_size=batch, threads=threads)
        actual = epoch["seconds"]
        again = train_one_epoch(candidate, examples=examples, batch_size=batch, threads=threads)["seconds"]
        gather = loading_seconds_per_batch(candidate, batch_size=batch, examples=examples, threads=threads)
        m["gather_seconds_per_batch"] = gather
        errors = {
            stat: predicted_epoch_seconds(value + gather, examples, batch) / actual - 1.0
            for stat, value in step_statistics(m["samples"]).items()
        }
        headline = None
        if not m["unreliable"]:
            headline = predicted_epoch_seconds(headline_step(m)[0], examples, batch) / actual - 1.0
        rows.append(
            {
                "actual": actual,
                # below ~0.85 the real epoch itself waited for a CPU: the comparison is then the machine's
                "epoch_cpu_per_wall": epoch["cpu_seconds"] / actual,
                "control": again / actual - 1.0,
                "errors": errors,
                "headline_error": headline,
                "withheld": [r["code"] for r in m["unreliable_reasons"]],
                "reasons": [r["text"] for r in m["unreliable_reasons"]],
                "iterations": m["iterations"],
                "stopped": m["stopped"],
                "interval_halfwidth": m["interval_halfwidth"],
                "contention": contention_signals(m),
                "gather_ms": gather * 1e3,
            }
        )
    controls = [r["control"] for r in rows]
    q1, _, q3 = statistics.quantiles(controls, n=4) if rounds > 1 else (0.0, 0.0, 0.0)
    published = [r["headline_error"] for r in rows if r["headline_error"] is not None]
    return {
        "network": name,
        "family": candidate["family"],
        "examples": examples,
        "batch": batch,
        "threads": threads,
        "load": load,
        "median_error": {s: statistics.median(r["errors"][s] for r in rows) for s in rows[0]["errors"]},
        "worst_error": {s: max((r["errors"][s] for r in rows), key=abs) for s in rows[0]["errors"]},
        "headlines": len(published),
        "withheld": rounds - len(published),
        "headline_within_target": sum(abs(e) <= TARGET for e in published),
        "control": q3 - q1,
        "rounds": rows,
    }


def _table(results: list[dict[str, Any]], rounds: int, load: int) -> str:
    stats = list(results[0]["median_error"])
    lines = [
        f"predicted (statistic + gathering) x batches vs one real epoch; medians over {rounds} rounds"
        + (f"; {load} CPU-bound process(es) started halfway through each measurement" if load else ""),
        "",
        "| network | family | batch | thr | "
        + " | ".join(f"{s} (worst)" for s in stats)
        + " | headline: published / within ±15% / withheld | ctrl | contention seen |",
        "|---|---|---:|---:|" + "---:|" * len(stats) + "---|---:|---|",
    ]
    for r in results:
        seen = sorted({code for row in r["rounds"] for code in row["withheld"]})
        lines.append(
            f"| {r['network']} | {r['family']} | {r['batch']} | {r['threads']} | "
            + " | ".join(f"{r['median_error'][s]:+.1%} ({r['worst_error'][s]:+.1%})" for s in stats)
            + f" | {r['headlines']} / {r['headline_within_target']} / {r['withheld']} | {r['control']:.1%} | "
            + (", ".join(seen) or "none")
            + " |"
        )
    published = sum(r["headlines"] for r in results)
    within = sum(r["headline_within_target"] for r in results)
    withheld = sum(r["withheld"] for r in results)
    lines += [
        "",
        f"headline ({HEADLINE_STATISTIC} + gathering): {published} published, {within} within ±15% of the "
        f"real epoch, {withheld} withheld as unreliable",
    ]
    for stat in stats:
        worst = max((abs(row["errors"][stat]) for r in results for row in r["rounds"]), default=0.0)
        inside = sum(abs(row["errors"][stat]) <= TARGET for r in results for row in r["rounds"])
        total = sum(len(r["rounds"]) for r in results)
        lines.append(
            f"- {stat} + gathering: {inside} of {total} rounds within ±15%, worst |error| {worst:.1%}"
        )
    notes = (
        "Each statistic's column: its median error over the rounds (worst round in brackets), every round "
        "counted, unreliable ones too. ctrl: IQR of the epoch against a second epoch in the same round "
        "(the machine's resolution). contention seen: measure()'s unreliable reasons in any round "
        "(interval, cpu_share, runnable, steal, throttled)."
    )
    return "\n".join(lines) + "\n\n" + textwrap.fill(notes, width=110) + "\n"


def main(argv: list[str]) -> int:
    parser = network_parser("epoch", __doc__ or "", networks=DEFAULT_NETWORKS, threads="1", rounds=3)
    parser.add_argument("--epoch-seconds", type=float, default=2.0)
    parser.add_argument("--min-seconds", type=float, default=1.0, help="measure()'s min_seconds")
    parser.add_argument(
        "--load", type=int, default=0, help="CPU-bound processes started halfway through each measurement"
    )
    parser.add_argument("--out", type=Path, default=None, help="write result.json and table.txt here")
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
    info = describe()
    results = []
    for name in names:
        for t in threads:
            r = compare(name, t, args.rounds, args.epoch_seconds, args.min_seconds, args.load)
            results.append(r)
            print(
                f"{name:<12} thr {t}: "
                + ", ".join(f"{s} {e:+.1%}" for s, e in r["median_error"].items())
                + f"; headline {r['headlines']} published ({r['headline_within_target']} within ±15%), "
                f"{r['withheld']} withheld",
                flush=True,
            )
    text = _table(results, args.rounds, args.load)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        command = "python -m bench epoch " + " ".join(argv)
        kept = {"machine": finish(info), "command": command, "load_average_end": os.getloadavg()}
        (args.out / "result.json").write_text(json.dumps({**kept, "results": results}, indent=1))
        (args.out / "table.txt").write_text(text)
    return 0
