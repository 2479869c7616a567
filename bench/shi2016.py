"""`python -m bench shi2016`: Shi et al. (2016) Table 4 reproduced on this machine with the advisor's harness.

Each of the six networks is a candidate dict (bench/networks.py) timed by `advisor.calibration.measure` at
the paper's mini-batch size, on synthetic data, at each CPU thread count and on each CUDA GPU. The output
folder gets shi2016.csv, shi2016.md (side by side with the paper), shi2016_time.png, shi2016_speedup.png and
machine.json. Allocator: glibc reads MALLOC_* at start-up, so `--allocator tuned|default` re-executes this
command with the environment set; the set-up used is written into every output.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import machine, networks
from bench import shi2016_paper as paper
from bench import shi2016_report as report
from bench.peak import PeakConfig, measure_peak

RESULTS = Path(__file__).with_name("results")
Measure = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Settings:
    # ResNet-50 takes seconds per step on one thread: a few timed steps over >= 3 s keep a full run short
    warmup: int = 2
    min_iterations: int = 3
    min_seconds: float = 3.0


QUICK = Settings(warmup=1, min_iterations=2, min_seconds=0.0)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench shi2016", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations per configuration (CI)")
    parser.add_argument(
        "--networks", default=",".join(networks.NAMES), help="comma-separated, default all six"
    )
    parser.add_argument(
        "--threads", default=None, help="comma-separated CPU thread counts (default 1..physical cores)"
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda (each GPU), cuda:N, or all (default cpu)")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default bench/results/<run>)")
    parser.add_argument(
        "--allocator",
        choices=["inherit", "default", "tuned"],
        default="inherit",
        help="glibc malloc set-up: keep the environment's, unset MALLOC_*, or set the large "
        "mmap/trim thresholds (re-executes this command)",
    )
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--min-iterations", type=int, default=None)
    parser.add_argument("--min-seconds", type=float, default=None)
    parser.add_argument("--scale", type=float, default=1.0, help=argparse.SUPPRESS)  # tests: shrink widths
    args = parser.parse_args(argv)
    args.network_list = [n.strip() for n in args.networks.split(",") if n.strip()]
    unknown = [n for n in args.network_list if n not in networks.NAMES]
    if unknown:
        parser.error(f"unknown network(s) {', '.join(unknown)}; choose from {', '.join(networks.NAMES)}")
    cores = machine.physical_cores()
    args.thread_list = (
        [int(t) for t in args.threads.split(",")] if args.threads else list(range(1, cores + 1))
    )
    if any(t < 1 for t in args.thread_list):
        parser.error("--threads must be positive integers")
    return args


def devices(choice: str) -> list[str]:
    import torch

    gpus = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    if choice == "cpu":
        return ["cpu"]
    if choice == "all":
        return ["cpu", *gpus]
    if choice == "cuda":
        if not gpus:
            raise SystemExit("--device cuda: no CUDA GPU is available")
        return gpus
    if choice.startswith("cuda:") and choice in gpus:
        return [choice]
    raise SystemExit(f"--device {choice}: not one of cpu, cuda, all, {', '.join(gpus) or '(no GPUs)'}")


def reexec_with_allocator(choice: str, argv: list[str], bench: str | None = "shi2016") -> None:
    """Restart this process under the harness's allocator set-up unless it already runs under it; `argv`
    follows `python -m bench <bench>` (bench=None: argv starts with the benchmark's name)."""
    if choice == "inherit":
        return
    from advisor.calibration.allocator import child_environment, current_allocator

    if current_allocator() == choice:
        return
    name = [bench] if bench else []
    os.execve(sys.executable, [sys.executable, "-m", "bench", *name, *argv], child_environment(choice))


class Progress:
    """One line on stderr, redrawn in place on a terminal, one line per step otherwise."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()

    def show(self, label: str, finished: bool = False) -> None:
        self.done += int(finished)
        width = 24
        filled = round(width * self.done / max(self.total, 1))
        elapsed = time.monotonic() - self.started
        line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {elapsed:6.0f}s  {label}"
        if self.tty:
            sys.stderr.write("\r\033[K" + line + ("\n" if self.done == self.total and finished else ""))
        elif finished:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def run_one(
    measure: Measure, cand: dict[str, Any], device: str, threads: int | None, s: Settings
) -> dict[str, Any]:
    return measure(
        cand,
        device=device,
        batch_size=cand["training"]["batch_size"],
        threads=threads,
        min_iterations=s.min_iterations,
        min_seconds=s.min_seconds,
        warmup=s.warmup,
    )


def default_measure() -> Measure:
    from advisor.calibration import measure

    return measure


def main(argv: list[str], measure: Measure | None = None) -> int:
    args = parse(argv)
    reexec_with_allocator(args.allocator, argv)
    import torch

    base = QUICK if args.quick else Settings()
    settings = Settings(
        warmup=base.warmup if args.warmup is None else args.warmup,
        min_iterations=base.min_iterations if args.min_iterations is None else args.min_iterations,
        min_seconds=base.min_seconds if args.min_seconds is None else args.min_seconds,
    )
    peak_config = PeakConfig(size=1024, min_repeats=3, min_seconds=0.2) if args.quick else PeakConfig()
    info = machine.describe()
    info["settings"] = {
        **asdict(settings),
        "quick": args.quick,
        "scale": args.scale,
        "peak": asdict(peak_config),
    }
    run_name = f"shi2016_{dt.datetime.now(dt.UTC):%Y-%m-%d}_{info['machine']}_{info['allocator']}"
    out: Path = args.out or RESULTS / run_name
    out.mkdir(parents=True, exist_ok=True)
    measure = measure or default_measure()
    table = paper.load()

    plan: list[tuple[str, str, int | None]] = []
    for device in devices(args.device):
        for network in args.network_list:
            plan += (
                [(network, device, t) for t in args.thread_list]
                if device == "cpu"
                else [(network, device, None)]
            )
    peak_threads = sorted({t for _, d, t in plan if d == "cpu" and t} | {torch.get_num_threads()})
    peak_keys = [("cpu", t) for t in peak_threads] + [
        (d, None) for d in {d for _, d, _ in plan if d != "cpu"}
    ]
    progress = Progress(len(plan) + len(peak_keys))

    peaks: dict[tuple[str, int | None], Any] = {}
    for device, threads in peak_keys:
        progress.show(f"matmul peak {device} {threads or ''}")
        peaks[(device, threads)] = measure_peak(threads or torch.get_num_threads(), device, peak_config)
        progress.show(
            f"matmul peak {device} {threads or ''}: {peaks[(device, threads)].flops / 1e9:.1f} GFLOP/s", True
        )

    rows: list[dict[str, Any]] = []
    candidates: dict[str, dict[str, Any]] = {}
    for network, device, threads in plan:
        label = f"{network} {device}" + (f" {threads} thread(s)" if threads else "")
        progress.show(label + " ...")
        row: dict[str, Any] = {
            "network": network,
            "device": device,
            "allocator": info["allocator"],
            "batch_size": networks.BATCH[network],
        }
        try:
            cand = candidates.get(network) or networks.candidate(network, args.scale)
            candidates[network] = cand
            row |= {
                "parameters": cand["parameters"],
                "flops_per_example": cand["flops_per_example"],
                "definition": cand["bench"]["definition"],
                "batch_size": cand["training"]["batch_size"],
            }
            result = run_one(measure, cand, device, threads, settings)
            row |= {k: result.get(k) for k in report.MEASURED}
            row["unreliable_reasons"] = ", ".join(r["code"] for r in result.get("unreliable_reasons") or [])
            if result.get("status", "ok") != "ok":
                row["error"] = f"{result.get('status')}: {result.get('message') or result.get('error')}"
            row["threads"] = result.get("threads") or threads or torch.get_num_threads()
        except Exception as exc:  # one broken network must not lose the others' figures
            row["error"] = f"{type(exc).__name__}: {exc}"
            row["threads"] = threads or torch.get_num_threads()
        peak = peaks.get((device, threads if device == "cpu" else None))
        if peak:
            row["peak_flops"] = peak.flops
            if row.get("achieved_flops"):
                row["fraction_of_peak"] = row["achieved_flops"] / peak.flops
        row |= report.paper_cells(network, device, row["threads"], table)
        rows.append(row)
        done = f"{row['seconds_per_batch']:.3f} s/batch" if row.get("seconds_per_batch") else "failed"
        progress.show(f"{label}: {done}", True)

    info = machine.finish(info)
    info["peaks"] = [asdict(p) for p in peaks.values()]
    info["networks"] = {
        n: {k: c[k] for k in ("parameters", "flops_per_example", "bench", "published")}
        for n, c in candidates.items()
    }
    title = (
        f"Shi et al. (2016) Table 4 on {info['machine']} ({info['started_utc'][:10]}, {info['allocator']})"
    )
    report.write_csv(rows, out / "shi2016.csv")
    report.write_json(info, out / "machine.json")
    (out / "shi2016.md").write_text(report.markdown(rows, info, info["peaks"], title), encoding="utf-8")
    report.plots(rows, out, "shi2016")
    print(f"wrote {out}/shi2016.csv, shi2016.md, shi2016_time.png, shi2016_speedup.png, machine.json")
    failed = [r for r in rows if r.get("error")]
    for r in failed:
        print(f"FAILED {r['network']} {r['device']} {r['threads']}: {r['error']}", file=sys.stderr)
    return 1 if failed else 0
