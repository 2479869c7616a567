"""`python -m bench predict`: how well the time model predicts measured seconds per batch on this machine.

One run profiles the device (advisor.calibration.profile) and then measures a grid of the engine's own
candidates (all ten families, two networks each, several batch sizes, 1 to the physical cores' threads) with
the calibration harness (advisor.calibration.measure), under the harness's tuned allocator. It reports:
  (a) the profile alone (advisor.engine.costmodel), as a recommendation shows before any calibration;
  (b) the learned correction (advisor.engine.learned) fitted on the other networks' rows only;
  (c) the learned correction fitted on the same network's other rows (an unmeasured batch or thread count);
  the catalog path (no profile: the catalog's peaks) against the GPU columns of Shi et al. Table 4;
  and how often the plan's thread count (the predicted-fastest) is within 5% of the best measured one.
Results go to bench/results/predict_<date>_<machine>/ (result.json, table.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench import shi2016_paper
from bench.machine import describe, finish, gpu_slug, machine_slug, run_header, write_result
from bench.predict_grid import grid_networks
from bench.predict_runs import add_profiled, analyse, stats, thread_choice
from bench.shi2016 import reexec_with_allocator

RESULTS = Path(__file__).with_name("results")
SHI_GPUS = {"gtx980": "gtx-980", "gtx1080": "gtx-1080", "k80": "k80-gk210"}


def measure_grid(
    networks: list[tuple[str, dict[str, Any]]],
    batches: list[int],
    threads: list[int],
    min_seconds: float,
    device: str = "cpu",
) -> list[dict[str, Any]]:
    from advisor.calibration import measure

    rows = []
    for name, candidate in networks:
        for batch in batches:
            for t in threads:
                m = measure(
                    candidate, device=device, batch_size=batch, threads=t, min_seconds=min_seconds, warmup=3
                )
                if m.get("status", "ok") != "ok":
                    continue
                rows.append(
                    {
                        "network": name,
                        "family": candidate["family"],
                        "batch": batch,
                        "threads": t,
                        "measured": m["seconds_per_batch"],
                        "iqr": m.get("iqr"),
                    }
                )
                print(f"  {name:<12} b={batch:<4} t={t} {m['seconds_per_batch'] * 1e3:9.3f} ms", flush=True)
    return rows


def compare_profiles(
    profiles: dict[str, Any],
    networks: list[tuple[str, dict[str, Any]]] | None = None,
    batches: tuple[int, ...] = (16, 64, 256),
    threads: tuple[int, ...] = (1, 2),
    min_seconds: float = 0.3,
) -> dict[str, Any]:
    """Profiles taken back to back, each scored against one grid measured once after them: on a shared
    machine separate runs drift more than two profiling methods differ, so methods are compared on the same
    measurements (bench/results/predict_amd-epyc-2c_ab-point-length/README.md). Per profile: thread choice
    within 5%, median |error|, share within ±20% and its profiling seconds; the measured rows and the loads
    are kept. `python -m bench profiles` runs it."""
    networks = networks or grid_networks(2)
    load_start = os.getloadavg()
    rows = measure_grid(networks, list(batches), list(threads), min_seconds)
    result: dict[str, Any] = {"load": [load_start, os.getloadavg()], "profiles": profiles, "rows": rows}
    for name, profile in profiles.items():
        scored = [dict(r) for r in rows]
        add_profiled(scored, dict(networks), profile)
        errors = [abs(r["error_profiled"]) for r in scored]
        result[name] = {
            "threads": thread_choice(scored)["within_5pct"],
            "median": statistics.median(errors),
            "within20": sum(e <= 0.2 for e in errors) / len(errors),
            "seconds": profile["seconds"],
        }
    return result


def catalog_vs_shi() -> list[dict[str, Any]]:
    """The catalog path (engine.estimate with the catalog's peaks) against Shi et al.'s best tool per cell."""
    from advisor.engine import catalog
    from advisor.engine.estimate import CatalogDevice, layer_count, seconds_per_batch
    from advisor.engine.memory import count_networks, kept_activations
    from bench import cnn_networks, networks

    table = shi2016_paper.load()
    rows = []
    for name in networks.NAMES:
        if name in cnn_networks.PUBLISHED:
            c = cnn_networks.candidate(name, networks.BATCH[name])
        else:
            c = networks.candidate(name)
        for column, gpu_id in SHI_GPUS.items():
            cells = [shi2016_paper.gpu(table, name, tool, column) for tool in shi2016_paper.TOOLS]
            best = min((v for v in cells if v), default=None)
            if best is None:
                continue
            entry = catalog.gpu(gpu_id)
            dev = CatalogDevice(
                "gpu",
                entry["name"],
                entry["fp32_tflops"] * 1e12,
                entry["memory_bandwidth_gbps"] * 1e9,
                1,
                entry["memory_gb"] * 1e9,
            )
            predicted = seconds_per_batch(
                family=c["family"],
                flops=c["flops_per_example"],
                parameters=c["parameters"],
                activations=kept_activations(count_networks(c)),
                layers=layer_count(c["networks"]),
                batch_size=networks.BATCH[name],
                device=dev,
            )
            rows.append(
                {
                    "network": name,
                    "gpu": column,
                    "paper_best": best,
                    "catalog": predicted,
                    "error": (predicted - best) / best,
                }
            )
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench predict", description=__doc__.split("\n")[0])
    parser.add_argument("--batches", default="16,64,256")
    parser.add_argument("--threads", default="", help="default 1..physical cores")
    parser.add_argument("--per-family", type=int, default=2)
    parser.add_argument("--min-seconds", type=float, default=0.3)
    parser.add_argument("--allocator", default="tuned", help="tuned (as calibrations run), default, inherit")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:N] (one host thread; no thread choice)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="one network per family, batch 64, 1 thread")
    parser.add_argument(
        "--from",
        dest="source",
        help="analyse a result.json's profile and rows again; several, comma-separated (runs of the same "
        "grid): the run-to-run floor and the model against the median of the runs (bench.predict_runs)",
    )
    args = parser.parse_args(argv)
    if args.source is not None and "," in args.source:
        paths = [Path(p) for p in args.source.split(",") if p]
        analyse(paths, args.out or paths[0].parent.with_name(paths[0].parent.name + "_together"))
        return 0
    if args.source is None:
        reexec_with_allocator(args.allocator, ["predict", *argv], bench=None)
    from advisor.calibration.devices import physical_cores
    from advisor.calibration.profile import profile_device
    from advisor.engine.costmodel import with_current_factor
    from advisor.engine.learned import cross_validate, rows_features

    info = describe()
    cuda = args.device.startswith("cuda")
    threads = (
        [int(t) for t in args.threads.split(",")]
        if args.threads
        else [1]
        if cuda  # a GPU step's host thread launches kernels; more threads do not change it
        else list(range(1, physical_cores() + 1))
    )
    batches = [int(b) for b in args.batches.split(",")]
    per_family = args.per_family
    if args.quick:
        threads, batches, per_family = [1], [64], 1
    started = time.perf_counter()
    networks = grid_networks(per_family)
    slug = gpu_slug(args.device) if cuda else machine_slug()
    out = args.out or RESULTS / f"predict_{info['started_utc'][:10]}_{slug}"
    out.mkdir(parents=True, exist_ok=True)
    if args.source is not None:  # the measured rows and their profile, analysed by today's model
        saved = json.loads(Path(args.source).read_text(encoding="utf-8"))
        profile, rows, info = with_current_factor(saved["profile"]), saved["rows"], saved["machine"]
        started -= float(saved.get("seconds") or 0.0)  # the measuring run's time, not this analysis's
        argv = saved["command"].split()[3:]
    else:
        profile = profile_device(args.device, threads=None if cuda else threads)
        print(f"profile: {profile['seconds']:.1f} s, load {os.getloadavg()}")
        rows = measure_grid(networks, batches, threads, args.min_seconds, args.device)
        kept = {"machine": finish(info), "command": "python -m bench predict " + " ".join(argv)}
        (out / "result.json").write_text(
            json.dumps({**kept, "profile": profile, "rows": rows}), encoding="utf-8"
        )
        info = kept["machine"]
    candidates = dict(networks)
    add_profiled(rows, candidates, profile)
    features = rows_features([(candidates[r["network"]], r["batch"], r["threads"]) for r in rows], profile)
    learned = cross_validate(rows, features, max_folds=len(rows))  # each network left out on its own
    thread_hits = thread_choice(rows)
    shi = catalog_vs_shi()
    result = {
        "machine": info,
        "command": "python -m bench predict " + " ".join(argv),
        "seconds": time.perf_counter() - started,
        "profile": profile,
        "rows": rows,
        "profiled": stats([r["error_profiled"] for r in rows]),
        "learned_leave_network_out": stats(learned["leave_network_out"]),
        "learned_same_network": stats(learned["same_network"]),
        "by_threads": {
            str(t): {
                "profiled": stats([r["error_profiled"] for r in rows if r["threads"] == t]),
                "learned_leave_network_out": stats(
                    [e for e, r in zip(learned["leave_network_out"], rows, strict=True) if r["threads"] == t]
                ),
                "learned_same_network": stats(
                    [e for e, r in zip(learned["same_network"], rows, strict=True) if r["threads"] == t]
                ),
            }
            for t in sorted({r["threads"] for r in rows})
        },
        "threads_within_5pct": thread_hits,
        "catalog_vs_shi": shi,
        "catalog_vs_shi_stats": stats([r["error"] for r in shi]) if shi else None,
    }
    write_result(out, result, _table(result))
    return 0


def _table(result: dict[str, Any]) -> str:
    lines = [
        *run_header(result, "predict"),
        "",
        "| network | batch | threads | measured ms | profiled ms | error |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['network']} | {r['batch']} | {r['threads']} | {r['measured'] * 1e3:.3f} | "
            f"{r['profiled'] * 1e3:.3f} | {r['error_profiled']:+.1%} |"
        )
    lines += [
        "",
        "| predictor | n | median abs | within 10% | within 15% | within 20% | 90th pct abs |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key in ("profiled", "learned_leave_network_out", "learned_same_network", "catalog_vs_shi_stats"):
        s = result[key]
        if s:
            lines.append(
                f"| {key} | {s['n']} | {s['median_abs']:.1%} | {s['within_10']:.0%} | {s['within_15']:.0%} | "
                f"{s['within_20']:.0%} | {s['p90_abs']:.1%} |"
            )
    for threads, by in result["by_threads"].items():
        for key, st in by.items():
            lines.append(
                f"| {key}, {threads} thread(s) | {st['n']} | {st['median_abs']:.1%} | {st['within_10']:.0%} "
                f"| {st['within_15']:.0%} | {st['within_20']:.0%} | {st['p90_abs']:.1%} |"
            )
    t = result["threads_within_5pct"]
    lines += [
        "",
        f"thread choice within 5% of the best measured: {t['within_5pct']} of {t['configurations']}",
        "",
        "| Shi network | GPU | paper best s | catalog s | error |",
        "|---|---|---:|---:|---:|",
    ]
    for r in result["catalog_vs_shi"]:
        lines.append(
            f"| {r['network']} | {r['gpu']} | {r['paper_best']:.4f} | {r['catalog']:.4f} "
            f"| {r['error']:+.0%} |"
        )
    return "\n".join(lines) + "\n"
