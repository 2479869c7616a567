"""`python -m bench predict --from A/result.json,B/result.json,...`: several runs of the same grid, analysed
together by today's model.

What no model can beat comes first, the measurement floor: how far the runs of each configuration lie from
one another (max / min of their medians, the share of configurations whose every run is within ±10% and
±20% of the configurations' median of runs) and how well one run is predicted by the others (the mean of
the other runs taken as the prediction: a perfect model of the machine cannot do much better against a
single run). Then the model against the median of the runs (the profiled figure: the median of each run's
prediction from its own profile), and the learned correction fitted on the pooled rows of every run,
leaving each network out (all its runs), or each configuration out (all its runs: the same network at a
batch or thread count not measured).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.machine import write_result

Key = tuple[str, int, int]


def _key(row: dict[str, Any]) -> Key:
    return (str(row["network"]), int(row["batch"]), int(row["threads"]))


def stats(errors: list[float]) -> dict[str, float]:
    """Median |error|, shares within 10/15/20%, the 90th percentile |error|, the signed median, and the 5th
    and 95th percentiles of measured / predicted (= 1 / (1 + error)): a 90% interval's factors, which
    advisor/engine/intervals.py takes from these results."""
    from advisor.engine.learned import quantile

    absolute = sorted(abs(e) for e in errors)
    ratios = [1.0 / (1.0 + e) for e in errors]
    n = len(absolute)
    return {
        "ratio_q05": quantile(ratios, 0.05),
        "ratio_q95": quantile(ratios, 0.95),
        "n": n,
        "median_abs": statistics.median(absolute),
        "within_10": sum(a <= 0.10 for a in absolute) / n,
        "within_15": sum(a <= 0.15 for a in absolute) / n,
        "within_20": sum(a <= 0.20 for a in absolute) / n,
        "p90_abs": absolute[max(0, round(0.9 * n) - 1)],
        "median_signed": statistics.median(errors),
    }


def common_keys(runs: list[list[dict[str, Any]]]) -> list[Key]:
    """The configurations every run measured, in the first run's order."""
    present = [{_key(r) for r in rows} for rows in runs]
    return [k for k in dict.fromkeys(_key(r) for r in runs[0]) if all(k in p for p in present)]


def floor(runs: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Run-to-run spread of the measured seconds of each configuration over `runs` (rows of each run)."""
    keys = common_keys(runs)
    by = [{_key(r): float(r["measured"]) for r in rows} for rows in runs]
    spread, worst, loro = [], [], []
    for k in keys:
        values = [b[k] for b in by]
        median = statistics.median(values)
        spread.append(max(values) / min(values))
        worst.append(max(abs(v - median) / median for v in values))
        for i, v in enumerate(values):  # each run predicted by the mean of the others
            others = values[:i] + values[i + 1 :]
            loro.append((statistics.fmean(others) - v) / v)
    return {
        "runs": len(runs),
        "configurations": len(keys),
        "spread_median": statistics.median(spread),
        "spread_p90": sorted(spread)[max(0, round(0.9 * len(spread)) - 1)],
        "all_runs_within_10": sum(w <= 0.10 for w in worst) / len(keys),
        "all_runs_within_20": sum(w <= 0.20 for w in worst) / len(keys),
        "other_runs_predict_one": stats(loro),
        "by_configuration": [
            {"network": k[0], "batch": k[1], "threads": k[2], "measured": [b[k] for b in by], "spread": s}
            for k, s in zip(keys, spread, strict=True)
        ],
    }


def add_profiled(rows: list[dict[str, Any]], candidates: dict[str, dict[str, Any]], profile: Any) -> None:
    """Each row's `profiled` seconds under `profile` by today's cost model, and its `error_profiled`."""
    from advisor.engine.costmodel import step_cost

    for r in rows:
        c = candidates[r["network"]]
        r["profiled"] = step_cost(c, batch_size=r["batch"], threads=r["threads"], profile=profile).seconds
        r["error_profiled"] = (r["profiled"] - r["measured"]) / r["measured"]


def thread_choice(rows: list[dict[str, Any]], by: str = "profiled") -> dict[str, Any]:
    """For each (network, batch): is the thread count fastest by `by` (the profiled prediction, or another
    run's measurement) within 5% of the measured best?"""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["network"], r["batch"]), []).append(r)
    hits = total = 0
    for group in groups.values():
        if len(group) < 2:
            continue
        best = min(r["measured"] for r in group)
        chosen = min(group, key=lambda r: r[by])
        total += 1
        hits += chosen["measured"] <= 1.05 * best
    return {"configurations": total, "within_5pct": hits / total if total else None}


def thread_choices(runs: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The plan's thread choice in each run, and the ceiling noise leaves any predictor: one run's
    measured-fastest count scored against each other run's measurements (every ordered pair)."""
    other = []
    for i, a in enumerate(runs):
        fastest = {_key(r): float(r["measured"]) for r in a}
        for j, b in enumerate(runs):
            if i != j:
                rows = [{**r, "other": fastest[_key(r)]} for r in b if _key(r) in fastest]
                other.append(thread_choice(rows, by="other")["within_5pct"])
    return {
        "profiled_each_run": [thread_choice(rows)["within_5pct"] for rows in runs],
        "another_runs_measurement": sorted(o for o in other if o is not None),  # None: one thread count
    }


def _against_median(
    keys: list[Key], runs: list[list[dict[str, Any]]], field: str, threads: int | None = None
) -> dict[str, float]:
    by = [{_key(r): r for r in rows} for rows in runs]
    errors = []
    for k in keys:
        if threads is not None and k[2] != threads:
            continue
        measured = statistics.median(float(b[k]["measured"]) for b in by)
        predicted = statistics.median(float(b[k][field]) for b in by)
        errors.append((predicted - measured) / measured)
    return stats(errors)


def analyse(paths: list[Path], out: Path) -> dict[str, Any]:
    from advisor.engine.costmodel import with_current_factor
    from advisor.engine.learned import cross_predict, rows_features
    from bench.predict_grid import grid_networks

    started = time.perf_counter()
    saved = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    for s in saved:  # the step factor derived by today's model where the profile kept its whole steps
        s["profile"] = with_current_factor(s["profile"])
    candidates = dict(grid_networks(2))
    runs: list[list[dict[str, Any]]] = []
    x: list[list[float]] = []
    for s in saved:
        rows = [dict(r) for r in s["rows"] if r["network"] in candidates]
        add_profiled(rows, candidates, s["profile"])
        x += rows_features([(candidates[r["network"]], r["batch"], r["threads"]) for r in rows], s["profile"])
        runs.append(rows)
    pooled = [r for rows in runs for r in rows]
    measured = [float(r["measured"]) for r in pooled]
    # the learned correction on every run's rows: a network (or a configuration) left out of all runs at once
    for field, groups in (
        ("learned_lono", [r["network"] for r in pooled]),
        ("learned_same", [_key(r) for r in pooled]),
    ):
        for r, p in zip(pooled, cross_predict(x, measured, groups), strict=True):
            r[field] = p
    keys = common_keys(runs)
    thread_counts = sorted({k[2] for k in keys})
    fields = {
        "profiled": "profiled",
        "learned_leave_network_out": "learned_lono",
        "learned_same_network": "learned_same",
    }

    def errors(field: str, rows: list[dict[str, Any]]) -> list[float]:
        return [(float(r[field]) - float(r["measured"])) / float(r["measured"]) for r in rows]

    result: dict[str, Any] = {
        "command": "python -m bench predict --from " + ",".join(str(p) for p in paths),
        "sources": [str(p) for p in paths],
        "machines": [
            {
                k: s["machine"].get(k)
                for k in (
                    "machine",
                    "cpu_model",
                    "allocator",
                    "started_utc",
                    "load_average_start",
                    "load_average_end",
                )
            }
            for s in saved
        ],
        "profile_seconds": [s["profile"]["seconds"] for s in saved],
        "floor": floor(runs),
        "threads_within_5pct": thread_choices(runs),
        "each_run_profiled": [stats(errors("profiled", rows)) for rows in runs],
        "pooled": {name: stats(errors(field, pooled)) for name, field in fields.items()},
        "against_median": {name: _against_median(keys, runs, field) for name, field in fields.items()},
        "against_median_by_threads": {
            str(t): {name: _against_median(keys, runs, field, t) for name, field in fields.items()}
            for t in thread_counts
        },
        "rows": [
            {
                "network": k[0],
                "batch": k[1],
                "threads": k[2],
                **{
                    f: [next(r[f] for r in rows if _key(r) == k) for rows in runs]
                    for f in ("measured", "profiled", "learned_lono", "learned_same")
                },
            }
            for k in keys
        ],
    }
    result["seconds"] = time.perf_counter() - started
    write_result(out, result, table(result))
    return result


def _line(name: str, s: dict[str, float]) -> str:
    return (
        f"| {name} | {s['n']} | {s['median_abs']:.1%} | {s['within_10']:.0%} | {s['within_15']:.0%} | "
        f"{s['within_20']:.0%} | {s['p90_abs']:.1%} | {s['median_signed']:+.1%} |"
    )


def table(result: dict[str, Any]) -> str:
    f = result["floor"]
    lines = [f"# bench predict over {f['runs']} runs of the same grid (today's model)", ""]
    for m, src, secs in zip(result["machines"], result["sources"], result["profile_seconds"], strict=True):
        lines.append(
            f"- `{src}`: {m['machine']} ({m['cpu_model']}), allocator {m['allocator']}, "
            f"started {m['started_utc']}, load {m['load_average_start'][0]:.2f} -> "
            f"{m['load_average_end'][0]:.2f}, profile {secs:.1f} s"
        )
    lines += [
        "",
        "## The measurement floor",
        "",
        f"{f['configurations']} configurations: run-to-run max/min of the measured median, median "
        f"{f['spread_median']:.2f}, 90th percentile {f['spread_p90']:.2f}; every run within ±10% of the "
        f"configuration's median of runs: {f['all_runs_within_10']:.0%}, within ±20%: "
        f"{f['all_runs_within_20']:.0%}.",
        "",
        "| predictor | n | median abs | within 10% | within 15% | within 20% | 90th pct abs | signed median"
        " |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        _line("the other runs' mean predicting one run (floor)", f["other_runs_predict_one"]),
    ]
    for i, s in enumerate(result["each_run_profiled"], 1):
        lines.append(_line(f"profiled, run {i} (its own profile)", s))
    for name, s in result["pooled"].items():
        lines.append(_line(f"{name}, every run's rows", s))
    for name, s in result["against_median"].items():
        lines.append(_line(f"{name}, against the median of runs", s))
    for t, by in result["against_median_by_threads"].items():
        for name, s in by.items():
            lines.append(_line(f"{name}, against the median, {t} thread(s)", s))
    choice = result["threads_within_5pct"]
    other = choice["another_runs_measurement"]
    if other:
        lines += [
            "",
            "Thread count within 5% of the measured fastest: the profile's choice in each run "
            + ", ".join(f"{h:.0%}" for h in choice["profiled_each_run"])
            + "; one run's measured-fastest count in another run (the ceiling the noise leaves), median "
            + f"{statistics.median(other):.0%}, range {other[0]:.0%}-{other[-1]:.0%}.",
        ]
    lines += [
        "",
        "| network | batch | threads | measured ms (each run) | spread | profiled ms (median) "
        "| error vs median |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in result["rows"]:
        measured = statistics.median(r["measured"])
        predicted = statistics.median(r["profiled"])
        lines.append(
            f"| {r['network']} | {r['batch']} | {r['threads']} | "
            f"{', '.join(f'{m * 1e3:.3f}' for m in r['measured'])} | "
            f"{max(r['measured']) / min(r['measured']):.2f} | {predicted * 1e3:.3f} | "
            f"{(predicted - measured) / measured:+.1%} |"
        )
    return "\n".join(lines) + "\n"
