"""`python -m bench generalise`: the profiled estimate on networks it was not built on.

Configurations come from a seeded generator of task descriptions across the whole TaskSpec space
(bench.generalise_specs: the engine's first candidates for each, capped at steps that measure in about a
second). A run alternates profiles and measurements, so that both see the machine at several moments:

    profile 1 -> every configuration once -> profile 2 -> every configuration again -> profile 3 -> again

each configuration measured at each thread count (threads back to back, their order flipped from one
configuration to the next; the configurations' order reversed from one round to the next) with the
calibration harness (measure(), under its tuned allocator). The estimate is the cost model's on the median of
the run's trusted profiles (engine.profile.merge, as a worker stores it), scored against the median of the
configuration's measurements. Beside it:
- the floor: each measurement against the median of the others (what a perfect model of the machine gets);
- the spread between the profiles: per configuration, max / min of the estimates from each profile alone,
  and each profile's own score (what one profile taken once gives);
- per family, per thread count, the contention signals of every measurement, and the same scores over the
  rows measure() judged quiet (every measurement reliable), with how many were dropped;
- the stated 90% intervals (engine.intervals, basis "profiled" on a CPU): their coverage of the measured
  medians and their width (upper / lower), and the ratio quantiles this run would give them.

A run keeps its measurements and profiles in run.json and its scores in result.json and table.md;
`--from RUN/run.json` scores a saved run again with today's cost model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench.generalise_specs import (
    BUILD_SEED,
    EVALUATION_SEED,
    EVALUATION_SEEDS,
    Configuration,
    configurations,
)
from bench.machine import describe, finish, machine_slug, write_result
from bench.shi2016 import Progress, reexec_with_allocator

RESULTS = Path(__file__).with_name("results")
WITHIN = 0.25  # the target's band
KEPT = ("family", "published", "networks", "io", "training", "parameters", "flops_per_example", "depth")


def _schedule(repeats: int, profiles: int) -> list[int]:
    """Before which round each profile is taken (repeats: after the last), spread evenly."""
    return [min(repeats, round(k * repeats / profiles)) for k in range(profiles)]


def _measured(m: dict[str, Any]) -> dict[str, Any]:
    """What a row keeps of one measure() call."""
    c = m.get("contention") or {}
    return {
        "seconds": m.get("seconds_per_batch"),
        "status": m.get("status", "ok"),
        "iterations": m.get("iterations"),
        "iqr": m.get("iqr"),
        # the process's CPU seconds a step: at one thread what a quiet machine's step would take, near enough,
        # where the wall clock also counts the waits for a CPU (kept to study a busy run, never scored)
        "cpu_seconds": (m.get("user_seconds_per_step") or 0.0) + (m.get("system_seconds_per_step") or 0.0),
        "unreliable": bool(m.get("unreliable")),
        "reasons": [r["code"] for r in m.get("unreliable_reasons") or []],
        "cpu_share": c.get("cpu_share"),
        "runnable_above_cpus": c.get("runnable_above_cpus"),
        "steal_share": c.get("steal_share"),
    }


def saved_configuration(c: Configuration) -> dict[str, Any]:
    """What run.json keeps of a configuration: enough to score it again without the generator."""
    return {
        "name": c.name,
        "family": c.family,
        "task": c.spec["task"],
        "spec": c.spec,
        "index": c.index,
        "batch": c.batch,
        "candidate": {k: c.candidate.get(k) for k in KEPT},
    }


def run(args: argparse.Namespace, argv: list[str]) -> Path:
    from advisor.calibration import measure
    from advisor.calibration.profile import profile_device

    info = describe()
    threads = [int(t) for t in args.threads.split(",")]
    drawn = configurations(args.seed, args.configs)
    # the same draw, measured only for these families: a change to one family's model checked on the rows
    # it concerns, in a fraction of the run
    families = set(args.families.split(",")) if args.families else None
    configs = [c for c in drawn.configurations if families is None or c.candidate["family"] in families]
    out = args.out or RESULTS / f"generalise_{info['started_utc'][:10]}_{machine_slug()}_seed{args.seed}"
    out.mkdir(parents=True, exist_ok=True)
    when = _schedule(args.repeats, args.profiles)
    profiles: list[dict[str, Any]] = []
    runs: dict[str, list[dict[str, Any]]] = {f"{c.name}@{t}": [] for c in configs for t in threads}
    progress = Progress(args.repeats * len(configs))
    flip = False
    for round_ in range(args.repeats + 1):
        for _ in range(when.count(round_)):
            profile = profile_device("cpu", threads=threads)
            profiles.append(profile)
            codes = [r["code"] for r in profile.get("unreliable_reasons") or []]
            print(f"profile {len(profiles)}: {profile['seconds']:.1f} s, untrusted by {codes or 'nothing'}")
        if round_ == args.repeats:
            break
        order = configs if round_ % 2 == 0 else configs[::-1]
        for c in order:
            counts = threads[::-1] if flip else threads
            flip = not flip
            for t in counts:
                m = measure(
                    c.candidate,
                    batch_size=c.batch,
                    threads=t,
                    min_seconds=args.min_seconds,
                    max_seconds=args.max_seconds,
                    warmup=3,
                )
                runs[f"{c.name}@{t}"].append({"round": round_, **_measured(m)})
            progress.show(f"round {round_ + 1} {c.name}", finished=True)
    saved = {
        "machine": finish(info),
        "command": "python -m bench generalise " + " ".join(argv),
        "seed": args.seed,
        "seed_is": "evaluation"
        if args.seed in EVALUATION_SEEDS
        else "build"
        if args.seed == BUILD_SEED
        else "other",
        "threads": threads,
        "configurations": [saved_configuration(c) for c in configs],
        "crashes": drawn.crashes,
        "profiles": profiles,
        "runs": runs,
    }
    (out / "run.json").write_text(json.dumps(saved), encoding="utf-8")
    return out / "run.json"


# --- scoring -----------------------------------------------------------------------------------------------


def _quantile(values: list[float], q: float) -> float:
    from advisor.engine.learned import quantile

    return quantile(values, q)


def summary(errors: list[float]) -> dict[str, Any]:
    """errors: (estimate - measured) / measured. The share within ±25%, median |error|, its signed median,
    the 90th percentile |error| and the 5th / 95th percentiles of measured / estimate (an interval's)."""
    if not errors:
        return {"n": 0}
    absolute = [abs(e) for e in errors]
    ratios = [1.0 / (1.0 + e) for e in errors]
    return {
        "n": len(errors),
        "within_25": sum(a <= WITHIN for a in absolute) / len(errors),
        "median_abs": statistics.median(absolute),
        "median_signed": statistics.median(errors),
        "p90_abs": _quantile(absolute, 0.9),
        "ratio_q05": _quantile(ratios, 0.05),
        "ratio_q95": _quantile(ratios, 0.95),
    }


def _floor(rows: list[dict[str, Any]]) -> list[float]:
    """Each measurement of a row predicted by the median of its others (rows with 2 or more)."""
    errors = []
    for r in rows:
        values = r["measured"]
        for i, v in enumerate(values):
            others = values[:i] + values[i + 1 :]
            if others:
                errors.append((statistics.median(others) - v) / v)
    return errors


def _scores(rows: list[dict[str, Any]], profiles: int) -> dict[str, Any]:
    from advisor.engine.intervals import profiled_ratios, ratios_for

    low, high = ratios_for("profiled", "cpu")
    # each row's stated interval, as the engine states it: spanning the merged profile's members' estimates
    stated = [profiled_ratios(r["estimate"], r.get("members", []), "cpu") for r in rows]
    errors = [r["error"] for r in rows]
    families = sorted({r["family"] for r in rows})
    spreads = [max(r["each"]) / min(r["each"]) for r in rows if r["each"] and min(r["each"]) > 0]
    return {
        "estimate": summary(errors),
        "floor": summary(_floor(rows)),
        "each_profile": [
            summary([(r["each"][i] - r["median"]) / r["median"] for r in rows]) for i in range(profiles)
        ],
        "profile_spread": {
            "median": statistics.median(spreads) if spreads else None,
            "p90": _quantile(spreads, 0.9) if spreads else None,
            "by_threads": {
                str(t): statistics.median(
                    max(r["each"]) / min(r["each"]) for r in rows if r["threads"] == t and r["each"]
                )
                for t in sorted({r["threads"] for r in rows})
            },
        },
        "by_family": {f: summary([r["error"] for r in rows if r["family"] == f]) for f in families},
        "by_threads": {
            str(t): summary([r["error"] for r in rows if r["threads"] == t])
            for t in sorted({r["threads"] for r in rows})
        },
        "intervals": {
            "ratios": [low, high],
            "width": high / low,
            "covered": sum(low * r["estimate"] <= r["median"] <= high * r["estimate"] for r in rows)
            / len(rows)
            if rows
            else None,
            # what the engine states: the band above where the profile is one, else the span
            "stated_width": statistics.median(h / lo for lo, h in stated) if rows else None,
            "stated_covered": sum(
                lo * r["estimate"] <= r["median"] <= h * r["estimate"]
                for r, (lo, h) in zip(rows, stated, strict=True)
            )
            / len(rows)
            if rows
            else None,
        },
    }


def score(saved: dict[str, Any]) -> dict[str, Any]:
    """Every row scored by today's cost model on the run's profiles."""
    from advisor.engine.costmodel import priced, step_cost, with_current_factor
    from advisor.engine.profile import merge, trusted

    profiles = [with_current_factor(p) for p in saved["profiles"]]
    kept = [p for p in profiles if trusted(p)] or profiles
    merged = with_current_factor(merge(kept))
    by_name = {c["name"]: c for c in saved["configurations"]}
    rows = []
    for key, runs in saved["runs"].items():
        name, threads = key.rsplit("@", 1)
        c, t = by_name[name], int(threads)
        ok = [r for r in runs if r["status"] == "ok" and r["seconds"]]
        if not ok:
            continue
        measured = [float(r["seconds"]) for r in ok]
        median = statistics.median(measured)
        candidate, batch = c["candidate"], int(c["batch"])
        cost, member_costs = priced(candidate, batch_size=batch, threads=t, profile=merged)
        estimate, members = cost.seconds, [m.seconds for m in member_costs]
        each = [step_cost(candidate, batch_size=batch, threads=t, profile=p).seconds for p in profiles]
        rows.append(
            {
                "name": name,
                "family": c["family"],
                "task": c["task"],
                "batch": batch,
                "threads": t,
                "measured": measured,
                "median": median,
                "estimate": estimate,
                "error": (estimate - median) / median,
                "each": each,
                "members": members,
                "quiet": len(ok) == len(runs) and not any(r["unreliable"] for r in ok),
                "reasons": sorted({code for r in ok for code in r["reasons"]}),
                "cpu_share": [r["cpu_share"] for r in ok],
                "runnable_above_cpus": [r["runnable_above_cpus"] for r in ok],
            }
        )
    quiet = [r for r in rows if r["quiet"]]
    reasons: dict[str, int] = {}
    for r in rows:
        for code in r["reasons"]:
            reasons[code] = reasons.get(code, 0) + 1
    return {
        "command": saved["command"],
        "machine": saved["machine"],
        "seed": saved["seed"],
        "seed_is": saved.get("seed_is"),
        "configurations": len(saved["configurations"]),
        "rows": rows,
        "crashes": saved.get("crashes", []),
        "profiles": [
            {
                "seconds": p["seconds"],
                "profiled_at": p["profiled_at"],
                "trusted": trusted(p),
                "reasons": [r["code"] for r in p.get("unreliable_reasons") or []],
                "runnable_above_cpus": (p.get("contention") or {}).get("runnable_above_cpus"),
                "steal_share": (p.get("contention") or {}).get("steal_share"),
            }
            for p in profiles
        ],
        "merged_from": merged.get("merged", 1),
        "all": _scores(rows, len(profiles)),
        "quiet": _scores(quiet, len(profiles)) if quiet else None,
        "dropped": len(rows) - len(quiet),
        "dropped_by_reason": reasons,
    }


def _line(name: str, s: dict[str, Any]) -> str:
    if not s.get("n"):
        return f"| {name} | 0 | | | | | |"
    return (
        f"| {name} | {s['n']} | {s['within_25']:.0%} | {s['median_abs']:.1%} | {s['median_signed']:+.1%} | "
        f"{s['p90_abs']:.1%} | {s['ratio_q05']:.2f}-{s['ratio_q95']:.2f} |"
    )


def _section(title: str, sc: dict[str, Any]) -> list[str]:
    head = [
        f"## {title}",
        "",
        "| estimate | n | within ±25% | median abs | signed median | 90th pct abs "
        "| measured/estimate 5-95% |",
        "|---|---:|---:|---:|---:|---:|---:|",
        _line("merged profile, against the median of the measurements", sc["estimate"]),
        _line("floor: one measurement against the median of the others", sc["floor"]),
    ]
    head += [_line(f"profile {i + 1} alone", s) for i, s in enumerate(sc["each_profile"])]
    head += [_line(f"{t} thread(s)", s) for t, s in sc["by_threads"].items()]
    head += [_line(f"family {f}", s) for f, s in sc["by_family"].items()]
    sp, iv = sc["profile_spread"], sc["intervals"]
    if sp["median"] is not None:
        per = ", ".join(f"{t} thread(s) {v:.2f}" for t, v in sp["by_threads"].items())
        head += [
            "",
            f"Spread between the profiles (max/min of their estimates): median {sp['median']:.2f}, "
            f"90th percentile {sp['p90']:.2f} ({per}).",
        ]
    if iv["covered"] is not None:
        low, high = iv["ratios"]
        head += [
            f"Stated 90% intervals (spanning the merged profile's members' estimates, "
            f"engine.intervals.profiled_ratios; median width {iv['stated_width']:.2f}) cover "
            f"{iv['stated_covered']:.0%} of {sc['estimate']['n']} configurations; the single profile's band "
            f"(x{low:.2f} to x{high:.2f}, width {iv['width']:.2f}) would cover {iv['covered']:.0%}.",
        ]
    return [*head, ""]


def _ms(values: list[float]) -> str:
    return ", ".join(f"{v * 1e3:.3g}" for v in values)


def table(result: dict[str, Any]) -> str:
    m = result["machine"]
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(result["dropped_by_reason"].items()))
    lines = [
        f"# bench generalise on {m['machine']} ({m['cpu_model']}), allocator {m['allocator']}",
        "",
        f"`{result['command']}`: seed {result['seed']} ({result['seed_is']}), {result['configurations']} "
        f"networks x thread counts = {len(result['rows'])} configurations; load average "
        f"{m['load_average_start'][0]:.2f} -> {m['load_average_end'][0]:.2f}.",
        "",
        "Profiles: "
        + "; ".join(
            f"{p['seconds']:.0f} s, "
            + ("trusted" if p["trusted"] else f"untrusted ({', '.join(p['reasons'])})")
            for p in result["profiles"]
        )
        + f"; the estimate's profile is the median of {result['merged_from']}.",
        f"Quiet rows (every measurement reliable): {len(result['rows']) - result['dropped']}; dropped "
        f"{result['dropped']} ({reasons}).",
    ]
    if result["crashes"]:
        lines.append(f"Specs the engine crashed on (not measured): {len(result['crashes'])}.")
    lines.append("")
    if result["quiet"]:
        lines += _section("Quiet rows", result["quiet"])
    lines += _section("Every row", result["all"])
    lines += [
        "## Rows",
        "",
        "| configuration | family | batch | threads | measured ms | estimate ms | error | each profile ms "
        "| quiet |",
        "|---|---|---:|---:|---|---:|---:|---|---|",
    ]
    for r in sorted(result["rows"], key=lambda r: r["error"]):
        lines.append(
            f"| {r['name']} | {r['family']} | {r['batch']} | {r['threads']} | {_ms(r['measured'])} | "
            f"{r['estimate'] * 1e3:.3g} | {r['error']:+.0%} | {_ms(r['each'])} | "
            f"{'yes' if r['quiet'] else ', '.join(r['reasons'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench generalise", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--seed", type=int, default=BUILD_SEED, help=f"build {BUILD_SEED}, evaluation {EVALUATION_SEED}"
    )
    parser.add_argument(
        "--configs", type=int, default=80, help="networks (each measured at every thread count)"
    )
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--families", default="", help="measure only these families of the draw (e.g. gru)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="measurements of each configuration, interleaved"
    )
    parser.add_argument("--profiles", type=int, default=3, help="profiles, spread between the rounds")
    parser.add_argument("--min-seconds", type=float, default=0.3)
    parser.add_argument("--max-seconds", type=float, default=1.5)
    parser.add_argument("--allocator", default="tuned", help="tuned (as calibrations run), default, inherit")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--from", dest="source", type=Path, help="score a saved run.json again")
    parser.add_argument(
        "--factor-steps",
        default="",
        help="which of wholesteps.WHOLE_STEPS set the step factor when scoring (e.g. 0: the small MLP alone; "
        "default: the engine's FACTOR_STEPS), to compare choices on one run's measurements",
    )
    args = parser.parse_args(argv)
    from advisor.engine import costmodel

    if args.factor_steps:
        costmodel.FACTOR_STEPS = tuple(int(i) for i in args.factor_steps.split(","))
    if args.source is None:
        reexec_with_allocator(args.allocator, ["generalise", *argv], bench=None)
        started = time.perf_counter()
        source = run(args, argv)
        seconds = time.perf_counter() - started
    else:
        source, seconds = args.source, 0.0
    saved = json.loads(source.read_text(encoding="utf-8"))
    result = score(saved)
    result["seconds"] = seconds or saved.get("seconds", 0.0)
    result["factor_steps"] = list(costmodel.FACTOR_STEPS)
    result["load_now"] = list(os.getloadavg())
    write_result(args.out or source.parent, {"source": str(source), **result}, table(result))
    return 0
