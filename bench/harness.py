"""`python -m bench harness`: does measure() time what an independent timer times, and what does it cost?

For each reference network (bench/examples.py) and thread count, in alternating rounds (so that all
see the same machine load):
  * agreement: measure()'s median step against torch.utils.benchmark.Timer timing single calls of the same
    training step (median of those, the same statistic), and against Timer.blocked_autorange's median (a
    median of block means, which sits above a median of steps when the times are skewed by load); the result
    is the median over rounds of the ratio, the target within 5%; "ctrl" is the Timer against itself in the
    same rounds (interquartile spread of the ratio), i.e. how finely this machine resolves a difference now;
  * overhead: measure()'s timing loop (advisor.calibration.measure.time_steps) against a bare loop of the same
    steps, median over rounds of the ratio; and, exactly, the loop's own cost per step measured on a no-op
    step; the target is under 2%.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from typing import Any

import torch
from torch.utils import benchmark

from advisor.calibration import make_step, measure
from advisor.calibration.measure import time_steps
from bench.examples import EXAMPLES

DEFAULT_NETWORKS = "tabular-mlp,mnist-mlp,mnist-cnn,text-lstm,mnist-gan,fcn-5"


def _bare(run: Any, batch: Any, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        run(batch)
    return (time.perf_counter() - start) / n


def harness_cost_per_step(seconds: float = 0.2) -> float:
    """Seconds the timing loop adds per step, measured on a step that does nothing."""
    cpu = torch.device("cpu")
    timed = time_steps(lambda b: None, (), cpu, min_iterations=1000, min_seconds=seconds, warmup=0)
    loop = sum(timed["samples"])  # what the per-step clocks saw of the step itself
    n = len(timed["samples"])
    start = time.perf_counter()
    time_steps(lambda b: None, (), cpu, min_iterations=n, min_seconds=0.0, warmup=0)
    return max(0.0, (time.perf_counter() - start) / n - loop / n)


def timer_median(timer: benchmark.Timer, seconds: float) -> float:
    """torch.utils.benchmark's timing of single calls, summarised like measure() (median of steps)."""
    times: list[float] = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 5:
        times.append(timer.timeit(1).raw_times[0])
    return statistics.median(times)


def compare(name: str, batch_size: int, threads: int, rounds: int, seconds: float) -> dict[str, Any]:
    candidate = EXAMPLES[name]()
    torch.set_num_threads(threads)
    agree, blocked, control, overhead, measured = [], [], [], [], []
    for _ in range(rounds):
        # A network's steps can speed up as it trains (mnist-cnn, quiet: 12.4-12.7 ms a step fresh, 10.6-11.4
        # ms after a few hundred; bench/results/harness_amd-epyc-2c/README.md), and measure() builds a fresh
        # one: so does each round's Timer, or the comparison is between a young network and an old one.
        step = make_step(candidate, "cpu")
        batch = step.make_batch(batch_size)
        for _ in range(2):
            step.run(batch)
        # New values in the batch for each timed call, drawn in the Timer's setup (outside its clock), as
        # measure() does before each step; the garbage collector left on, as in measure() (timeit turns it
        # off while it times)
        timer = benchmark.Timer(
            stmt="run(batch)",
            setup="gc.enable(); refill(batch)",
            globals={"run": step.run, "batch": batch, "refill": step.refill, "gc": gc},
            num_threads=threads,
        )
        m = measure(candidate, batch_size=batch_size, threads=threads, min_seconds=seconds, warmup=2)
        reference = timer_median(timer, seconds)
        measured.append(m["seconds_per_batch"])
        agree.append(m["seconds_per_batch"] / reference)
        blocked.append(m["seconds_per_batch"] / timer.blocked_autorange(min_run_time=seconds).median)
        control.append(timer_median(timer, seconds) / reference)
        n = max(3, int(seconds / m["seconds_per_batch"]))
        bare = _bare(step.run, batch, n)
        start = time.perf_counter()
        timed = time_steps(step.run, batch, torch.device("cpu"), min_iterations=n, min_seconds=0.0, warmup=0)
        overhead.append((time.perf_counter() - start) / len(timed["samples"]) / bare)
    q1, _, q3 = statistics.quantiles(control, n=4) if rounds > 1 else (1.0, 1.0, 1.0)
    return {
        "network": name,
        "batch": batch_size,
        "threads": threads,
        "measure_ms": statistics.median(measured) * 1e3,
        "agreement": statistics.median(agree) - 1.0,
        "blocked": statistics.median(blocked) - 1.0,
        "control_spread": q3 - q1,
        "loop_overhead": statistics.median(overhead) - 1.0,
        "harness_us": harness_cost_per_step() * 1e6,
    }


def network_parser(
    command: str, doc: str, *, networks: str, threads: str, rounds: int
) -> argparse.ArgumentParser:
    """The options `bench harness` and `bench epoch` share: which example networks, thread counts, rounds."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {command}", description=doc.split("\n")[0])
    parser.add_argument("--networks", default=networks, help=f"from {', '.join(EXAMPLES)}")
    parser.add_argument("--threads", default=threads)
    parser.add_argument("--rounds", type=int, default=rounds)
    return parser


def chosen_networks(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[list[str], list[int]]:
    """--networks and --threads as lists; an unknown network name stops with argparse's usage error."""
    names = args.networks.split(",")
    unknown = [n for n in names if n not in EXAMPLES]
    if unknown:
        parser.error(f"--networks: unknown {', '.join(unknown)}; choose from {', '.join(EXAMPLES)}")
    return names, [int(t) for t in args.threads.split(",")]


def main(argv: list[str]) -> int:
    parser = network_parser("harness", __doc__ or "", networks=DEFAULT_NETWORKS, threads="1,2", rounds=4)
    parser.add_argument("--seconds", type=float, default=1.0, help="minimum seconds per timing in each round")
    parser.add_argument("--quick", action="store_true", help="two small networks, 1 thread, 3 short rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.networks, args.threads, args.rounds, args.seconds = "tabular-mlp,mnist-cnn", "1", 3, 0.5
    names, threads = chosen_networks(parser, args)
    print(
        f"measure() vs torch.utils.benchmark and a bare loop; medians over {args.rounds} alternating rounds"
    )
    header = (
        f"{'network':<12} {'batch':>5} {'thr':>3} {'measure ms':>11} {'vs Timer':>8} {'ctrl':>6} "
        f"{'vs blocked':>10} {'loop ovh':>8} {'harness/step':>20}"
    )
    print(header)
    print("-" * len(header))
    worst_agree, worst_overhead = 0.0, 0.0
    for name in names:
        batch = int(EXAMPLES[name]()["training"]["batch_size"])
        for t in threads:
            r = compare(name, batch, t, args.rounds, args.seconds)
            cost = r["harness_us"] / 1e3 / r["measure_ms"]
            worst_agree = max(worst_agree, abs(r["agreement"]))
            worst_overhead = max(worst_overhead, cost)
            print(
                f"{name:<12} {batch:>5} {t:>3} {r['measure_ms']:>11.3f} {r['agreement']:>+8.1%} "
                f"{r['control_spread']:>6.1%} {r['blocked']:>+10.1%} {r['loop_overhead']:>+8.1%} "
                f"{r['harness_us']:>7.2f} us ({cost:.3%})",
                flush=True,
            )
    print(
        f"\nworst |vs Timer| {worst_agree:.1%} (target < 5%); worst harness cost {worst_overhead:.3%} (< 2%)"
    )
    print(
        "vs Timer: median step, measure() against torch.utils.benchmark single calls; ctrl: the Timer against"
        " "
        "itself (IQR);\nvs blocked: against blocked_autorange's median of block means; loop ovh: measure()'s "
        "loop against a bare loop\n(noise included); harness/step: the loop's own cost per step (no-op step)."
    )
    return 0
