"""`python -m bench learned --calibrations 4,8,16`: does the learned correction, gated as the worker gates it,
ever make estimates worse than the profile alone?

One run profiles this device (advisor.calibration.profile), then plays calibrations of the predict grid's
networks (bench.predict_grid) in a seeded order: each measures its network at --batches x --threads with
measure() (the stopping rule and contention signals as a worker's sweep has them); --loaded of them (the 2nd,
5th, 8th, ...) run with --load CPU-bound processes started halfway through each measurement, as a busy
shared machine does. The networks the largest stage never calibrates are measured once at the end (quietly)
as the held-out configurations. After each stage (4, 8, 16 calibrations) the correction is fitted on the
reliable rows so far (engine.learned.fit_correction: networks left out, used only where it beats the profile)
and both it (where used) and the profile alone predict the held-out configurations. Target: the gated
estimate's median |error| never more than 2 points above the profile's. Results in --out (result.json,
table.md), default bench/results/learned_<date>_<machine>/.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

from bench.machine import describe, finish, machine_slug, run_header, write_result
from bench.predict_grid import grid_networks
from bench.shi2016 import reexec_with_allocator

RESULTS = Path(__file__).with_name("results")
TARGET_POINTS = 0.02


def measure_network(
    name: str,
    candidate: dict[str, Any],
    batches: list[int],
    threads: list[int],
    min_seconds: float,
    load: int,
) -> list[dict[str, Any]]:
    """One calibration's rows: every batch x threads configuration of the network, under `load` competing
    processes started halfway through each measurement (0: none)."""
    from advisor.calibration import measure
    from bench.load import start_load, stop_load

    rows = []
    for batch in batches:
        for t in threads:
            competing = start_load(load, min_seconds / 2)
            try:
                m = measure(candidate, batch_size=batch, threads=t, min_seconds=min_seconds)
            finally:
                stop_load(competing)
            if m["status"] != "ok":
                continue
            rows.append(
                {
                    "network": name,
                    "batch": batch,
                    "threads": t,
                    "measured": m["seconds_per_batch"],
                    "loaded": bool(load),
                    "unreliable": m["unreliable"],
                    "reasons": [r["code"] for r in m["unreliable_reasons"]],
                }
            )
            print(
                f"  {name:<12} b={batch:<4} t={t} {m['seconds_per_batch'] * 1e3:9.3f} ms"
                + (f" (load {load})" if load else "")
                + (f" unreliable: {', '.join(rows[-1]['reasons'])}" if m["unreliable"] else ""),
                flush=True,
            )
    return rows


def _median_error(predicted: list[float], measured: list[float]) -> float:
    return statistics.median(abs(p - m) / m for p, m in zip(predicted, measured, strict=True))


def stage(
    calibrated: list[list[dict[str, Any]]],
    held_out: list[dict[str, Any]],
    candidates: dict[str, dict[str, Any]],
    profile: Any,
) -> dict[str, Any]:
    """The gated correction fitted on the reliable rows of `calibrated`, against the profile alone, on the
    reliable held-out rows."""
    from advisor.engine.costmodel import step_cost
    from advisor.engine.learned import fit_correction

    rows = [r for calibration in calibrated for r in calibration if not r["unreliable"]]
    configs = [
        (r["network"], candidates[r["network"]], r["batch"], r["threads"], r["measured"]) for r in rows
    ]
    correction = fit_correction(configs, profile)
    test = [r for r in held_out if not r["unreliable"]]
    measured = [r["measured"] for r in test]
    profiled = [
        step_cost(
            candidates[r["network"]], batch_size=r["batch"], threads=r["threads"], profile=profile
        ).seconds
        for r in test
    ]
    gated = profiled
    if correction is not None and correction.used:
        gated = [
            correction.seconds(candidates[r["network"]], r["batch"], r["threads"], profile) for r in test
        ]
    profile_error, gated_error = _median_error(profiled, measured), _median_error(gated, measured)
    return {
        "calibrations": len(calibrated),
        "loaded_calibrations": sum(any(r["loaded"] for r in c) for c in calibrated),
        "rows": len(rows),
        "unreliable_rows_left_out": sum(r["unreliable"] for c in calibrated for r in c),
        "validation": dict(correction.validation) if correction is not None else None,
        "used": bool(correction is not None and correction.used),
        "held_out_rows": len(test),
        "profile_median_error": profile_error,
        "gated_median_error": gated_error,
        "points_worse": gated_error - profile_error,
        "within_target": gated_error - profile_error <= TARGET_POINTS,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench learned", description=__doc__.split("\n")[0])
    parser.add_argument("--calibrations", default="4,8,16", help="the stages: calibrations fitted on")
    parser.add_argument("--batches", default="16,64")
    parser.add_argument("--threads", default="", help="default 1..physical cores")
    parser.add_argument("--per-family", type=int, default=2)
    parser.add_argument("--min-seconds", type=float, default=0.5, help="as CALIBRATION_MIN_SECONDS")
    parser.add_argument("--loaded", type=int, default=2, help="calibrations run under a competing load")
    parser.add_argument("--load", type=int, default=2, help="CPU-bound processes in a loaded calibration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--allocator", default="tuned", help="tuned (as calibrations run), default, inherit")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    reexec_with_allocator(args.allocator, ["learned", *argv], bench=None)
    from advisor.calibration.devices import physical_cores
    from advisor.calibration.profile import profile_device

    stages = sorted({int(s) for s in args.calibrations.split(",")})
    threads = (
        [int(t) for t in args.threads.split(",")] if args.threads else list(range(1, physical_cores() + 1))
    )
    batches = [int(b) for b in args.batches.split(",")]
    networks = grid_networks(args.per_family)
    random.Random(args.seed).shuffle(networks)
    if stages[-1] >= len(networks):
        parser.error(f"--calibrations: at most {len(networks) - 1} of the grid's {len(networks)} networks")
    info = describe()
    started = time.perf_counter()
    out = args.out or RESULTS / f"learned_{info['started_utc'][:10]}_{machine_slug()}"
    out.mkdir(parents=True, exist_ok=True)
    profile = profile_device("cpu", threads=threads)
    print(f"profile: {profile['seconds']:.1f} s, load {os.getloadavg()}", flush=True)
    # the 2nd, 5th, 8th ... calibration under load, --loaded of them
    loaded = {1 + 3 * i for i in range(args.loaded)}
    calibrations = []
    for i, (name, candidate) in enumerate(networks[: stages[-1]]):
        load = args.load if i in loaded else 0
        print(f"calibration {i + 1}: {name}" + (f", {load} competing processes" if load else ""), flush=True)
        calibrations.append(measure_network(name, candidate, batches, threads, args.min_seconds, load))
    print("held out:", flush=True)
    held_out = [
        r
        for name, candidate in networks[stages[-1] :]
        for r in measure_network(name, candidate, batches, threads, args.min_seconds, 0)
    ]
    candidates = dict(networks)
    result = {
        "machine": finish(info),
        "command": "python -m bench learned " + " ".join(argv),
        "seconds": time.perf_counter() - started,
        "profile": profile,
        "order": [name for name, _ in networks],
        "calibrations": calibrations,
        "held_out": held_out,
        "stages": [stage(calibrations[:k], held_out, candidates, profile) for k in stages],
    }
    write_result(out, result, table(result))
    return 0


def table(result: dict[str, Any]) -> str:
    lines = [
        *run_header(result, "learned"),
        "",
        "| calibrations (under load) | reliable rows (unreliable left out) | correction: CV median / "
        "profile's, same rows | used | held-out rows | held-out median error: profile / gated | points worse "
        "| ≤ 2 |",
        "|---|---:|---|---|---:|---|---:|---|",
    ]
    for s in result["stages"]:
        v = s["validation"]
        cv = f"{v['median_error']:.1%} / {v['profile_median_error']:.1%}" if v else "too few rows"
        lines.append(
            f"| {s['calibrations']} ({s['loaded_calibrations']}) | {s['rows']} "
            f"({s['unreliable_rows_left_out']}) | {cv} | {'yes' if s['used'] else 'no'} | "
            f"{s['held_out_rows']} | "
            f"{s['profile_median_error']:.1%} / {s['gated_median_error']:.1%} | "
            f"{100 * s['points_worse']:+.1f} | {'yes' if s['within_target'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"
