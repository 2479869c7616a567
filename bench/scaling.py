"""`python -m bench scaling`: data-parallel training at each world size, against Wünsche (2018) §III-H.

For each reference network (bench/examples.py) and synchronisation ("sync": DDP all-reduce every
step; "mixed": post-local-SGD with periodic parameter averaging), the advisor's own data-parallel calibration
(advisor.calibration.run_scaling) runs world sizes 1, 2, ... on this host: gloo on the CPU with the physical
cores split between the ranks (or --threads per rank), NCCL with one GPU per rank under --device cuda. Each
rank keeps the network's batch, so a world of N ranks trains N x batch examples per step. The whole sweep is
repeated in alternating rounds (all configurations see the same machine load); medians over rounds are
reported.

W §III-H quotes, for each doubling of GPUs, a cut in training time of 35% (CNTK, MXNet), 28% (Caffe) and 10%
(Torch, TensorFlow); the plan scales its time by the best of them. A doubling cuts the time of a fixed amount
of work by 1 - examples_per_second(N) / examples_per_second(2N), the figure printed beside those.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import statistics
from pathlib import Path
from typing import Any

from advisor.calibration.scaling import ScalingPlan, run_scaling
from bench import machine
from bench.examples import EXAMPLES

# W §III-H: the cut in training time for each doubling of GPUs, by tool.
W_PER_DOUBLING = {"CNTK, MXNet": 0.35, "Caffe": 0.28, "Torch, TensorFlow": 0.10}


def _median_rows(runs: list[list[dict[str, Any]]], network: str) -> list[dict[str, Any]]:
    """The median over rounds of each world size's figures; efficiency from the median throughputs."""
    rows = []
    for i, first in enumerate(runs[0]):
        same = [run[i] for run in runs]
        row = {**first, "network": network, "rounds": len(same)}
        for key in ("seconds_per_step", "examples_per_second", "allreduce_seconds", "allreduce_share", "iqr"):
            row[key] = statistics.median(float(r[key]) for r in same)
        row["seconds_per_step_rounds"] = [float(r["seconds_per_step"]) for r in same]
        rows.append(row)
    base = rows[0]
    for row in rows:
        row["efficiency"] = row["examples_per_second"] / (
            base["examples_per_second"] / base["world_size"] * row["world_size"]
        )
    for before, after in itertools.pairwise(rows):
        if after["world_size"] == 2 * before["world_size"]:
            after["time_cut_per_doubling"] = 1 - before["examples_per_second"] / after["examples_per_second"]
    return rows


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    worlds = sorted({int(r["world_size"]) for r in rows})
    for (network, sync), group in _groups(rows).items():
        ax.plot(
            [r["world_size"] for r in group],
            [r["efficiency"] for r in group],
            marker="o",
            label=f"{network} ({sync})",
        )
    for tool, cut in W_PER_DOUBLING.items():
        # A cut c per doubling: throughput x 1/(1-c) per doubling, so efficiency (1/(2(1-c)))^log2(N).
        ax.plot(
            worlds,
            [(1 / (2 * (1 - cut))) ** (w.bit_length() - 1) for w in worlds],
            linestyle="--",
            color="grey",
            alpha=0.6,
        )
        ax.annotate(f"W §III-H {tool}: -{cut:.0%}/doubling", (worlds[-1], (1 / (2 * (1 - cut)))), fontsize=7)
    ax.set_xscale("log", base=2)
    ax.set_xlim(worlds[0] / 1.2, worlds[-1] * 2.5)  # room for the W labels
    ax.set_xticks(worlds, [str(w) for w in worlds])
    ax.set_xlabel("world size (processes)")
    ax.set_ylabel("scaling efficiency (examples/s over N x one rank's)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _groups(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["network"]), str(row["sync"])), []).append(row)
    return groups


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench scaling", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--network", default="tabular-mlp,mnist-cnn,text-lstm,fcn-5", help=", ".join(EXAMPLES)
    )
    parser.add_argument("--world", default="1,2", help="world sizes, e.g. 1,2,4")
    parser.add_argument("--sync", default="sync,mixed", help="sync, mixed or both")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument(
        "--threads", default="1", help="CPU threads per rank, or 'split': the physical cores shared out"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum timed seconds per world size")
    parser.add_argument(
        "--allocator", default="tuned", help="the ranks' allocator set-up (default, tuned, ...)"
    )
    parser.add_argument("--quick", action="store_true", help="the first network, sync, one short round")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    names = args.network.split(",")
    syncs = args.sync.split(",")
    if args.quick:
        names, syncs, args.rounds, args.seconds = names[:1], ["sync"], 1, 0.3
    unknown = [n for n in names if n not in EXAMPLES]
    if unknown:
        parser.error(f"--network: unknown {', '.join(unknown)}; choose from {', '.join(EXAMPLES)}")
    info = machine.describe()
    out = args.out or Path("bench/results") / f"scaling_{dt.datetime.now(dt.UTC):%Y-%m-%d}_{info['machine']}"
    out.mkdir(parents=True, exist_ok=True)
    worlds = [int(w) for w in args.world.split(",")]
    runs: dict[tuple[str, str], list[list[dict[str, Any]]]] = {}
    for round_ in range(args.rounds):
        for name in names:
            for sync in syncs:
                plan = ScalingPlan(
                    EXAMPLES[name](),
                    world_sizes=worlds,
                    device=args.device,
                    sync=sync,
                    min_seconds=args.seconds,
                    allocator=args.allocator,
                    threads=None if args.threads == "split" else int(args.threads),
                    time_limit_s=1800,
                )
                result = run_scaling(plan)
                if result["status"] != "succeeded":
                    print(f"{name} {sync}: {result['status']}: {result['error']}")
                    return 1
                runs.setdefault((name, sync), []).append(result["rows"])
                line = " ".join(
                    f"N={r['world_size']}: {r['seconds_per_step'] * 1e3:.2f} ms" for r in result["rows"]
                )
                print(f"round {round_ + 1} {name:<12} {sync:<5} {line}", flush=True)
    rows = [row for (name, _), group in runs.items() for row in _median_rows(group, name)]
    (out / "scaling.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "machine.json").write_text(
        json.dumps({**machine.finish(info), "ranks_allocator": args.allocator, "argv": argv}, indent=1) + "\n"
    )
    _plot(rows, out / "scaling.png")
    print(f"\nmedians over {args.rounds} round(s); allocator {args.allocator}; out {out}")
    header = (
        f"{'network':<12} {'sync':<5} {'N':>2} {'ms/step':>9} {'ex/s':>9} {'eff':>5} {'allreduce ms':>12} "
        f"{'cut/doubling':>12}"
    )
    print(header)
    for r in rows:
        cut = r.get("time_cut_per_doubling")
        print(
            f"{r['network']:<12} {r['sync']:<5} {r['world_size']:>2} {r['seconds_per_step'] * 1e3:>9.2f} "
            f"{r['examples_per_second']:>9.0f} {r['efficiency']:>5.2f} {r['allreduce_seconds'] * 1e3:>12.2f} "
            f"{'' if cut is None else f'{cut:+.0%}':>12}"
        )
    print("W §III-H per doubling: " + ", ".join(f"{k} -{v:.0%}" for k, v in W_PER_DOUBLING.items()))
    return 0
