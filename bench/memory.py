"""`python -m bench memory`: the engine's training-memory estimate against what training really takes.

Candidates of all ten families come from advisor.engine.recommend() over varied specs; each runs at several
mini-batch sizes, every configuration in a fresh process (started with the harness's tuned glibc malloc
unless --allocator default). On the CPU the child first pays the runtime's fixed cost on a tiny unrelated
network, then trains the candidate: the resident set's peak growth over that is the RSS reference
(`rss_training_growth_bytes`, advisor.calibration.resident), the median of --repeats fresh processes (their
spread in `rss_spread`), split into its anonymous (heap) and file-backed (library code) parts. It then runs
measure() twice; the second gives the live-tensor peak (what PyTorch's dispatcher sees allocated,
advisor.calibration.memory.LiveTensors; CUDA: max_memory_allocated) and the old reference, the second run's
growth after a malloc_trim (`rss_growth_bytes`).
Against the estimates (memory_for(..., device=)["total"], the live peak; resident_for(), the simulated heap):
within 10% of the live-tensor peak for 90% of configurations; within 20% of the RSS reference for 90% of
those of 30 MB or more.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from advisor.engine import families, memory_for, recommend, resident_for

FAMILIES = families.KEYS
BATCHES = (8, 32, 128)
LIVE_TARGET, RSS_TARGET, RSS_FLOOR = 0.10, 0.20, 30e6
# the resident set stops rising after the second step (bench/results/memory_intel-xeon-2c_fresh/README.md)
TRAINING_STEPS = 4

_CPU = {"cpu_cores": 2, "ram_gb": 16}


def _spec(task: str, shape: list[int], **data: Any) -> dict[str, Any]:
    top = {k: data.pop(k) for k in ("goal", "generation") if k in data}
    return {"task": task, **top, "hardware": _CPU, "data": {"examples": 10_000, "input_shape": shape, **data}}


SPECS = [
    _spec("tabular", [40], goal="classify", outputs=4),
    _spec("tabular", [300], goal="classify", outputs=3, examples=500_000),
    _spec("tabular", [40], outputs=4, labelled_fraction=0.2),
    _spec("tabular", [300], goal="compress"),
    _spec("vision", [1, 28, 28], outputs=10),
    _spec("vision", [3, 32, 32], outputs=10, labelled_fraction=0.1),
    _spec("vision", [1, 28, 28], goal="compress"),
    _spec("generation", [1, 28, 28], generation="random"),
    _spec("generation", [3, 32, 32], generation="controlled"),
    _spec("sequence", [32], outputs=5, vocab_size=1_000),
    _spec("sequence", [50, 12], outputs=5),
    _spec("generation", [32], vocab_size=1_000),
]


def candidates(per_family: int) -> list[dict[str, Any]]:
    """Up to `per_family` distinct candidates of each family (distinct layer lists)."""
    found: dict[str, list[dict[str, Any]]] = {f: [] for f in FAMILIES}
    seen: set[str] = set()
    for spec in SPECS:
        for c in recommend(spec)["candidates"]:
            key = json.dumps(c["networks"], sort_keys=True)
            family = c["family"]
            if family in found and key not in seen and len(found[family]) < per_family:
                seen.add(key)
                found[family].append(c)
    return [c for f in FAMILIES for c in found[f]]


def _child(payload: dict[str, Any]) -> dict[str, Any]:
    """Runs in the fresh process: the runtime's fixed cost, the network's training growth (the RSS
    reference), then measure() twice, the second for the live peak."""
    import torch

    from advisor.calibration import measure
    from advisor.calibration.resident import pay_fixed_cost, rss_parts, training_rss_growth

    candidate, batch = payload["candidate"], payload["batch"]
    training_growth, parts = None, {}
    if not payload["device"].startswith("cuda"):
        torch.set_num_threads(1)  # as measure() below runs it
        pay_fixed_cost()
        before = rss_parts()
        training_growth = training_rss_growth(candidate, batch_size=batch, steps=TRAINING_STEPS)
        # how the growth splits: the heap (anonymous) and libtorch's code pages first touched (file-backed)
        parts = {f"{k}_growth_bytes": v - before[k] for k, v in rss_parts().items() if k in before}
        if payload.get("rss_only"):  # a repeat of the reference: measure() would add nothing to it
            return {"rss_training_growth_bytes": training_growth, **parts}
    kwargs = {"device": payload["device"], "batch_size": batch, "threads": 1, "min_iterations": 3}
    first = measure(candidate, min_seconds=0.05, warmup=1, **kwargs)
    second = measure(candidate, min_seconds=0.1, warmup=1, **kwargs)
    cuda = payload["device"].startswith("cuda")
    return {
        "status": second["status"],
        "live_tensor_peak_bytes": second.get("live_tensor_peak_bytes"),
        "rss_growth_bytes": second.get("rss_growth_bytes"),
        "rss_training_growth_bytes": training_growth,
        **parts,
        "first_growth_bytes": first.get("peak_memory_bytes"),
        "max_memory_allocated_bytes": second["peak_memory_bytes"] if cuda else None,
        "max_memory_reserved_bytes": second.get("max_memory_reserved_bytes"),
        "allocator": second["allocator"],
        "torch": torch.__version__,
    }


def _fresh(payload: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.memory", "--child"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run_one(
    candidate: dict[str, Any], batch: int, device: str, env: dict[str, str], *, repeats: int = 1
) -> dict[str, Any]:
    """One configuration; on the CPU the RSS reference is the median of `repeats` fresh processes (one
    process's heap layout, and so its growth, varies by about 15%:
    bench/results/memory_intel-xeon-2c_fresh/README.md)."""
    payload = {"candidate": candidate, "batch": batch, "device": device}
    measured = _fresh(payload, env)
    estimate = memory_for(candidate, batch_size=batch, device=device)
    reference = measured["max_memory_allocated_bytes"] or measured["live_tensor_peak_bytes"]
    resident = None if device.startswith("cuda") else resident_for(candidate, batch_size=batch)
    if measured["rss_training_growth_bytes"] is not None:
        repeated = [_fresh({**payload, "rss_only": True}, env) for _ in range(repeats - 1)]
        samples = [measured["rss_training_growth_bytes"]] + [r["rss_training_growth_bytes"] for r in repeated]
        measured["rss_training_growth_samples"] = samples
        for key in ("RssAnon_growth_bytes", "RssFile_growth_bytes"):
            if key in measured:
                measured[key] = round(statistics.median([measured[key]] + [r[key] for r in repeated]))
        measured["rss_training_growth_bytes"] = round(statistics.median(samples))
        # the reference's own spread: (largest - smallest) / median of the fresh processes
        measured["rss_spread"] = (max(samples) - min(samples)) / max(1, statistics.median(samples))
    rss = measured["rss_training_growth_bytes"]
    row = {
        "family": candidate["family"],
        "network": _name(candidate),
        "batch": batch,
        "estimate": estimate,
        **measured,
        "live_error": estimate["total"] / reference - 1 if reference else None,
        "rss_error": estimate["total"] / rss - 1 if rss else None,
        # the allocator-aware estimate (resident_for) against the same resident-set growth
        "resident": resident,
        "resident_error": resident / rss - 1 if rss and resident else None,
        # kept so that `--table FILE --rescore` can score a later engine against the same measurements
        "candidate": candidate,
    }
    return row


def rescore(row: dict[str, Any]) -> dict[str, Any]:
    """A saved CPU row with the engine's current estimates against its measured references."""
    c, batch = row["candidate"], row["batch"]
    estimate, resident = memory_for(c, batch_size=batch), resident_for(c, batch_size=batch)
    live, rss = row["live_tensor_peak_bytes"], row["rss_training_growth_bytes"]
    return {
        **row,
        "estimate": estimate,
        "resident": resident,
        "live_error": estimate["total"] / live - 1 if live else None,
        "rss_error": estimate["total"] / rss - 1 if rss else None,
        "resident_error": resident / rss - 1 if rss else None,
    }


def _name(c: dict[str, Any]) -> str:
    widths = "-".join(str(h) for h in c.get("hidden_sizes") or [])
    return f"{c['family']} {'x'.join(map(str, c['io']['input_shape']))} [{widths}]"


HEADER = (
    f"{'network':<34} {'batch':>5} {'estimate':>10} {'live':>10} {'err':>7} {'rss':>10} {'err':>7}"
    f" {'resident':>10} {'err':>7} {'spread':>7}"
)


def row_text(r: dict[str, Any]) -> str:
    live, rss = r["max_memory_allocated_bytes"] or r["live_tensor_peak_bytes"], _rss(r)
    return (
        f"{r['network']:<34} {r['batch']:>5} {r['estimate']['total'] / 1e6:>9.2f}M "
        f"{(live or 0) / 1e6:>9.2f}M {r['live_error'] or 0:>+7.1%} {(rss or 0) / 1e6:>9.2f}M "
        f"{r['rss_error'] or 0:>+7.1%} {(r.get('resident') or 0) / 1e6:>9.2f}M "
        f"{r.get('resident_error') or 0:>+7.1%} {r.get('rss_spread') or 0:>7.1%}"
    )


def _rss(row: dict[str, Any]) -> int | None:
    """The RSS reference: a fresh process's training growth; saved runs from before it, the second run's."""
    value: int | None = row.get("rss_training_growth_bytes", row["rss_growth_bytes"])
    return value


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    live = [abs(r["live_error"]) for r in rows if r["live_error"] is not None]
    big = [r for r in rows if (_rss(r) or 0) >= RSS_FLOOR and r["rss_error"] is not None]
    rss = [abs(r["rss_error"]) for r in big]
    resident = [abs(r["resident_error"]) for r in big if r.get("resident_error") is not None]
    spread = [r["rss_spread"] for r in big if r.get("rss_spread") is not None]
    return {
        "configurations": len(rows),
        "live_within_10pct": sum(e <= LIVE_TARGET for e in live) / len(live) if live else None,
        "live_median_abs_error": statistics.median(live) if live else None,
        "rss_configurations_over_30MB": len(big),
        "rss_within_20pct": sum(e <= RSS_TARGET for e in rss) / len(rss) if rss else None,
        "rss_median_abs_error": statistics.median(rss) if rss else None,
        "resident_within_20pct": sum(e <= RSS_TARGET for e in resident) / len(resident) if resident else None,
        "resident_median_abs_error": statistics.median(resident) if resident else None,
        "rss_median_spread": statistics.median(spread) if spread else None,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench memory", description=__doc__.split("\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--per-family", type=int, default=2)
    parser.add_argument("--batches", default=",".join(map(str, BATCHES)))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--allocator", choices=("tuned", "default"), default="tuned")
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh processes per configuration for the RSS reference"
    )
    parser.add_argument("--max-bytes", type=float, default=2e9, help="skip configurations estimated above")
    parser.add_argument("--out", type=Path, help="write rows and summary as JSON here")
    parser.add_argument("--table", type=Path, help="print the table and summary of a saved --out file")
    parser.add_argument("--rescore", action="store_true", help="--table with the engine's estimates now")
    parser.add_argument(
        "--curve", metavar="FAMILY", help="per-step RSS, heap and in-use growth of one family"
    )
    parser.add_argument("--trace", metavar="FAMILY", help="glibc's allocations over training one family")
    parser.add_argument("--batch", type=int, default=128, help="--curve's and --trace's mini-batch")
    parser.add_argument("--steps", type=int, default=8, help="--curve's steps")
    parser.add_argument("--no-trim", action="store_true", help="--curve without malloc_trim between runs")
    args = parser.parse_args(argv)
    if args.trace:
        from bench.malloc_trace import report, trace

        candidate = next(c for c in candidates(1) if c["family"] == args.trace)
        print(report(trace(candidate, args.batch)), flush=True)
        return 0
    if args.curve:
        from bench.memory_curve import curve

        candidate = next(c for c in candidates(1) if c["family"] == args.curve)
        return curve(candidate, args.batch, args.steps, trim=not args.no_trim)
    if args.table:
        saved = json.loads(args.table.read_text())
        if args.rescore:
            saved["rows"] = [rescore(r) for r in saved["rows"]]
        print(HEADER, *(row_text(r) for r in saved["rows"]), sep="\n")
        print(json.dumps(summary(saved["rows"]), indent=1))
        return 0
    if args.child:
        print(json.dumps(_child(json.loads(sys.stdin.read()))))
        return 0
    from advisor.calibration.allocator import TUNED_GLIBC_ENV
    from bench import machine

    env = dict(os.environ)
    for key in TUNED_GLIBC_ENV:
        env.pop(key, None)
    if args.allocator == "tuned":
        env.update(TUNED_GLIBC_ENV)
    info = machine.describe()
    rows: list[dict[str, Any]] = []
    print(HEADER)
    for c in candidates(args.per_family):
        for batch in (int(b) for b in args.batches.split(",")):
            if memory_for(c, batch_size=batch, device=args.device)["total"] > args.max_bytes:
                continue
            rows.append(run_one(c, batch, args.device, env, repeats=args.repeats))
            print(row_text(rows[-1]), flush=True)
    result = {"machine": machine.finish(info), "summary": summary(rows), "rows": rows}
    print(json.dumps(result["summary"], indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
