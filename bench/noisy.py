"""`python -m bench noisy`: does measure() on a busy machine give the quiet median, or say it cannot?

Issue 24's target: measure()'s reported median within ±10% of the same configuration measured on the quiet
machine for >= 90% of configurations, or marked unreliable.

A fixed, varied grid: the predict grid's networks (bench.predict_grid: the engine's own candidates, the
smallest and the largest of each family) x --batches x --threads (80 configurations by default; --configs N
keeps N of them, evenly spaced through the grid). Each is measured with measure() as a calibration measures it
(its stopping rule, contention signals and verdict, the app's min_seconds, the harness's tuned allocator:
re-executed, as `bench predict` is), three times in a row, configuration by configuration, so that a drifting
background falls on all three alike:
  quiet        nothing of ours runs beside it;
  loaded       --load N CPU-bound processes (bench.load), spinning before the measurement starts and
               stopped after it, their CPU time recorded;
  quiet again  with the first, the floor: how far one configuration moves between two quiet measurements.
The quiet reference is the mean of the two quiet medians. A configuration scores when its loaded median is
within ±10% of it or the loaded run was marked unreliable; a miss is a loaded run off by more than 10% and not
marked. Also reported: quiet runs marked unreliable (false alarms: a rule that marks every run is useless),
and per contention signal its values on quiet, loaded and missed runs, with the threshold that would have
caught every miss and the share of quiet runs it would then have marked. Whether the quiet phase was quiet
is read from its own signals, and the run says so. --out: result.json and table.md (default
bench/results/noisy_<date>_<machine>/).
"""

from __future__ import annotations

import argparse
import statistics
import textwrap
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

from bench.load import contention_signals, start_load, stop_load
from bench.machine import describe, finish, machine_slug, write_result
from bench.predict_grid import grid_networks
from bench.shi2016 import reexec_with_allocator

RESULTS = Path(__file__).with_name("results")
TARGET = 0.10  # the loaded median's distance from the quiet reference
TARGET_SHARE = 0.90
# more quiet runs than this share with a contention reason: the "quiet" phase was not quiet
NOT_QUIET_SHARE = 0.10
CONTENTION_CODES = ("cpu_share", "runnable", "steal", "throttled", "gpu_shared")  # judge's, less "interval"
PHASES = ("quiet", "loaded", "quiet_again")
QUICK_CONFIGS = 12
NOTES = (
    "quiet reference: the mean of the two quiet medians; floor: the second quiet median against the first; "
    "ratio: loaded median / reference. sig: measure()'s contention signals, CPU seconds per timed second / "
    "share of samples with more runnable tasks than CPUs. load cores: the busy processes' CPU seconds per "
    "second of the loaded measure(). Verdict 'within, marked': within the target but marked."
)


@dataclass(frozen=True)
class Config:
    network: str
    family: str
    batch: int
    threads: int


class Phase(TypedDict):
    """One measure() of a configuration, as the bench keeps it."""

    median: float  # seconds per batch
    iqr: float
    iterations: int
    stopped: str  # measure()'s stopping rule: "precise" or "time"
    unreliable: bool
    reasons: list[str]  # the unreliable_reasons' codes
    reason_texts: list[str]
    signals: dict[str, float | None]  # bench.load.contention_signals
    seconds: float  # the measure() call's wall time
    load: dict[str, Any] | None  # bench.load.stop_load's report; None in a quiet phase


class Row(TypedDict):
    config: dict[str, Any]
    quiet: Phase
    loaded: Phase
    quiet_again: Phase
    reference: float  # the mean of the two quiet medians
    floor: float  # quiet_again / quiet - 1
    ratio: float  # loaded / reference
    within: bool  # |ratio - 1| <= TARGET
    verdict: str  # "within", "within, marked", "marked", "miss"


def configurations(
    per_family: int, batches: list[int], threads: list[int], keep: int = 0
) -> list[tuple[Config, dict[str, Any]]]:
    """The grid, network by network; `keep` > 0: that many configurations evenly spaced through it."""
    grid = [
        (Config(name, candidate["family"], b, t), candidate)
        for name, candidate in grid_networks(per_family)
        for b in batches
        for t in threads
    ]
    if keep <= 0 or keep >= len(grid):
        return grid
    return [grid[round(i * len(grid) / keep)] for i in range(keep)]


def measure_phase(
    candidate: dict[str, Any], config: Config, *, min_seconds: float, load: int
) -> Phase | None:
    """measure() once, with `load` busy processes spinning throughout (0: none); None when it ran out of
    memory."""
    from advisor.calibration import measure

    competing = start_load(load, 0.0, wait=True)
    started = time.perf_counter()
    try:
        m = measure(candidate, batch_size=config.batch, threads=config.threads, min_seconds=min_seconds)
    finally:
        seconds = time.perf_counter() - started
        report = stop_load(competing)
    if m["status"] != "ok":
        return None
    return {
        "median": m["seconds_per_batch"],
        "iqr": m["iqr"],
        "iterations": m["iterations"],
        "stopped": m["stopped"],
        "unreliable": m["unreliable"],
        "reasons": [r["code"] for r in m["unreliable_reasons"]],
        "reason_texts": [r["text"] for r in m["unreliable_reasons"]],
        "signals": contention_signals(m),
        "seconds": seconds,
        "load": report if load else None,
    }


def judge_row(config: Config, quiet: Phase, loaded: Phase, again: Phase) -> Row:
    reference = (quiet["median"] + again["median"]) / 2
    ratio = loaded["median"] / reference
    within = abs(ratio - 1.0) <= TARGET
    marked = loaded["unreliable"]
    verdict = ("within, marked" if marked else "within") if within else ("marked" if marked else "miss")
    return {
        "config": asdict(config),
        "quiet": quiet,
        "loaded": loaded,
        "quiet_again": again,
        "reference": reference,
        "floor": again["median"] / quiet["median"] - 1.0,
        "ratio": ratio,
        "within": within,
        "verdict": verdict,
    }


def measure_configuration(
    config: Config, candidate: dict[str, Any], *, min_seconds: float, load: int
) -> Row | None:
    """Quiet, loaded, quiet again, back to back; None where any phase ran out of memory."""
    phases = [measure_phase(candidate, config, min_seconds=min_seconds, load=n) for n in (0, load, 0)]
    quiet, loaded, again = phases
    if quiet is None or loaded is None or again is None:
        return None
    return judge_row(config, quiet, loaded, again)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _contended(phase: Phase) -> bool:
    return any(code in CONTENTION_CODES for code in phase["reasons"])


def score(rows: list[Row]) -> dict[str, Any]:
    """The target's share and what stands beside it: misses, false alarms, the floor, the load's CPU."""
    n = len(rows)
    verdicts = Counter(r["verdict"] for r in rows)
    quiet = [r[p] for r in rows for p in ("quiet", "quiet_again")]
    firm = [
        r
        for r in rows
        if not r["quiet"]["unreliable"] and not r["quiet_again"]["unreliable"] and abs(r["floor"]) <= TARGET
    ]
    load_cores = [
        sum(r["loaded"]["load"]["cpu_seconds"]) / r["loaded"]["seconds"]
        for r in rows
        if r["loaded"]["load"] and r["loaded"]["seconds"] > 0
    ]
    contended = sum(_contended(q) for q in quiet)
    return {
        "configurations": n,
        "verdicts": dict(verdicts),
        "score": _share(n - verdicts["miss"], n),
        "met": n > 0 and (n - verdicts["miss"]) / n >= TARGET_SHARE,
        "misses": _share(verdicts["miss"], n),
        "loaded_within": _share(verdicts["within"] + verdicts["within, marked"], n),
        "loaded_marked": _share(verdicts["marked"] + verdicts["within, marked"], n),
        "loaded_reasons": dict(Counter(c for r in rows for c in r["loaded"]["reasons"])),
        "quiet_runs": len(quiet),
        "quiet_marked": _share(sum(q["unreliable"] for q in quiet), len(quiet)),
        "quiet_contended": _share(contended, len(quiet)),
        "quiet_reasons": dict(Counter(c for q in quiet for c in q["reasons"])),
        "quiet_was_quiet": bool(quiet) and contended / len(quiet) <= NOT_QUIET_SHARE,
        "floor_within": _share(sum(abs(r["floor"]) <= TARGET for r in rows), n),
        "floor_median_abs": statistics.median(abs(r["floor"]) for r in rows) if rows else None,
        # configurations whose two quiet runs were unmarked and agree within the target: a firm reference
        "firm_configurations": len(firm),
        "firm_score": _share(sum(r["verdict"] != "miss" for r in firm), len(firm)),
        "load_cores_median": statistics.median(load_cores) if load_cores else None,
    }


def _thresholds() -> dict[str, tuple[float | None, bool]]:
    """Each signal the bench reads -> (the verdict's threshold on it, None where it has none; whether a low
    value is the bad one)."""
    from advisor.calibration.contention import MAX_STEAL_SHARE, MIN_CPU_SHARE, RUNNABLE_SHARE
    from advisor.engine.robust import PRECISION

    return {
        "cpu_per_wall": (MIN_CPU_SHARE, True),
        "cpu_share": (None, True),
        "runnable_above_cpus": (RUNNABLE_SHARE, False),
        "runnable_median": (None, False),
        "steal_share": (MAX_STEAL_SHARE, False),
        "interval_halfwidth": (PRECISION, False),
    }


def _spread(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"n": len(values), "median": statistics.median(values), "min": min(values), "max": max(values)}


def signal_table(rows: list[Row]) -> list[dict[str, Any]]:
    """Per signal: its values on quiet runs, loaded runs and missed loaded runs; the threshold that would have
    marked every miss, and the share of quiet runs that threshold would have marked too."""
    found = []
    for name, (threshold, low_is_bad) in _thresholds().items():

        def values(phases: list[Phase], key: str = name) -> list[float]:
            return [float(v) for p in phases if (v := p["signals"].get(key)) is not None]

        quiet = values([r[p] for r in rows for p in ("quiet", "quiet_again")])
        missed = values([r["loaded"] for r in rows if r["verdict"] == "miss"])
        catch = (max(missed) if low_is_bad else min(missed)) if missed else None
        marked = None
        if catch is not None and quiet:
            marked = sum((v <= catch) if low_is_bad else (v >= catch) for v in quiet) / len(quiet)
        found.append(
            {
                "signal": name,
                "threshold": threshold,
                "low_is_bad": low_is_bad,
                "quiet": _spread(quiet),
                "loaded": _spread(values([r["loaded"] for r in rows])),
                "missed": _spread(missed),
                "catches_every_miss": catch,
                "quiet_marked_by_it": marked,
            }
        )
    return found


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g}"


def _seen(phase: Phase) -> str:
    s = phase["signals"]
    return f"{_num(s['cpu_per_wall'])} / {_pct(s['runnable_above_cpus'])}"


def table(result: dict[str, Any]) -> str:
    m, s, rows = result["machine"], result["score"], result["rows"]
    load = result["options"]["load"]
    lines = [
        f"# bench noisy on {m['machine']} ({m['cpu_model']}), allocator {m['allocator']}",
        f"load average start {m['load_average_start']}, end {m['load_average_end']}; --load {load} busy "
        f"process(es), median {_num(s['load_cores_median'])} cores of CPU taken by them while loaded; "
        f"whole run {result['seconds']:.0f} s",
        "",
    ]
    if not s["quiet_was_quiet"]:
        lines += [
            f"**THE QUIET PHASE WAS NOT QUIET**: {_pct(s['quiet_contended'])} of the quiet runs saw "
            f"contention (over {NOT_QUIET_SHARE:.0%}): other work shared this machine, so this run shows "
            "that the bench works; it does not measure the target, which needs a quiet machine.",
            "",
        ]
    lines += [
        f"score: {_pct(s['score'])} of {s['configurations']} configurations loaded within ±{TARGET:.0%} of "
        f"the quiet reference or marked unreliable (target >= {TARGET_SHARE:.0%}: "
        f"{'met' if s['met'] else 'missed'}); misses (off by more, not marked): {_pct(s['misses'])}",
        f"- loaded runs within ±{TARGET:.0%}: {_pct(s['loaded_within'])}; marked unreliable: "
        f"{_pct(s['loaded_marked'])} (reasons {s['loaded_reasons'] or 'none'}); verdicts {s['verdicts']}",
        f"- quiet runs marked unreliable (false alarms): {_pct(s['quiet_marked'])} of {s['quiet_runs']} "
        f"(reasons {s['quiet_reasons'] or 'none'}); with a contention reason: {_pct(s['quiet_contended'])}",
        f"- floor: the two quiet runs within ±{TARGET:.0%} of each other in {_pct(s['floor_within'])}, "
        f"median |difference| {_pct(s['floor_median_abs'])}",
        f"- on the {s['firm_configurations']} configurations with a firm reference (both quiet runs unmarked "
        f"and within ±{TARGET:.0%}): score {_pct(s['firm_score'])}",
        "",
        "| network | family | batch | thr | quiet ms | again ms | floor | loaded ms | ratio | verdict | "
        "loaded marked | quiet marked | quiet sig | loaded sig | load cores |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|---|---:|",
    ]
    for r in rows:
        c, q, ld, a = r["config"], r["quiet"], r["loaded"], r["quiet_again"]
        taken = ld["load"]
        cores = sum(taken["cpu_seconds"]) / ld["seconds"] if taken and ld["seconds"] > 0 else None
        quiet_marked = ", ".join(sorted(set(q["reasons"]) | set(a["reasons"]))) or "-"
        lines.append(
            f"| {c['network']} | {c['family']} | {c['batch']} | {c['threads']} | {_ms(q['median'])} | "
            f"{_ms(a['median'])} | {r['floor']:+.1%} | {_ms(ld['median'])} | {r['ratio']:.2f} | "
            f"{r['verdict']} | {', '.join(ld['reasons']) or '-'} | {quiet_marked} | {_seen(q)}; {_seen(a)} | "
            f"{_seen(ld)} | {_num(cores)} |"
        )
    lines += [
        "",
        "| signal | threshold | quiet runs: median (min-max) | loaded | missed | marks every miss at | "
        "quiet runs it would mark |",
        "|---|---:|---|---|---|---:|---:|",
    ]
    for g in result["signals"]:

        def spread(d: dict[str, float] | None) -> str:
            return "n/a" if d is None else f"{_num(d['median'])} ({_num(d['min'])}-{_num(d['max'])})"

        side = ("< " if g["low_is_bad"] else ">= ") + _num(g["threshold"]) if g["threshold"] else "-"
        lines.append(
            f"| {g['signal']} | {side} | {spread(g['quiet'])} | "
            f"{spread(g['loaded'])} | {spread(g['missed'])} | {_num(g['catches_every_miss'])} | "
            f"{_pct(g['quiet_marked_by_it'])} |"
        )
    return "\n".join([*lines, "", *textwrap.wrap(NOTES, width=110)]) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench noisy", description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--per-family", type=int, default=2, help="networks of each family (bench predict's)")
    parser.add_argument("--batches", default="16,64")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--configs", type=int, default=0, help="keep N configurations of the grid (0: all)")
    parser.add_argument("--quick", action="store_true", help=f"--configs {QUICK_CONFIGS}: a few minutes")
    parser.add_argument("--load", type=int, default=2, help="busy processes in the loaded phase")
    parser.add_argument("--min-seconds", type=float, default=0.5, help="measure()'s (the app's default)")
    parser.add_argument("--allocator", default="tuned", help="tuned (as calibrations run), default, inherit")
    parser.add_argument("--out", type=Path, default=None, help="result.json and table.md go here")
    args = parser.parse_args(argv)
    reexec_with_allocator(args.allocator, ["noisy", *argv], bench=None)
    keep = args.configs or (QUICK_CONFIGS if args.quick else 0)
    batches, threads = [int(b) for b in args.batches.split(",")], [int(t) for t in args.threads.split(",")]
    info = describe()
    started = time.perf_counter()
    chosen = configurations(args.per_family, batches, threads, keep)
    # one measurement thrown away: the first in a process pays imports and first-call costs
    measure_phase(chosen[0][1], chosen[0][0], min_seconds=0.1, load=0)
    rows: list[Row] = []
    skipped = []
    for i, (config, candidate) in enumerate(chosen, 1):
        row = measure_configuration(config, candidate, min_seconds=args.min_seconds, load=args.load)
        if row is None:
            skipped.append(asdict(config))
            continue
        rows.append(row)
        print(
            f"[{i}/{len(chosen)}] {config.network} b{config.batch} t{config.threads}: quiet "
            f"{_ms(row['quiet']['median'])} / {_ms(row['quiet_again']['median'])} ms, loaded "
            f"{_ms(row['loaded']['median'])} ms ({row['ratio']:.2f}x) {row['verdict']} "
            f"{row['loaded']['reasons']}",
            flush=True,
        )
    result = {
        "machine": finish(info),
        "command": "python -m bench noisy " + " ".join(argv),
        "options": {k: v for k, v in vars(args).items() if k != "out"} | {"configs": keep},
        "seconds": time.perf_counter() - started,
        "score": score(rows),
        "signals": signal_table(rows),
        "rows": rows,
        "skipped": skipped,
    }
    out = args.out or RESULTS / f"noisy_{info['started_utc'][:10]}_{machine_slug()}"
    write_result(out, result, table(result))
    return 0
