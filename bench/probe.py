"""`python -m bench probe`: the answer a user gets from the probe on the bundled digits sample, and whether
the advised network holds its own against the best classical baseline over many paired splits (issue 25
item 3).

1. **The product's answer**: `shallow_first` (advisor/probe/learning/probe.py), exactly as a worker's child
   runs it, on the digits demo sample for the recommendation of an 8x8 image task at the target (0.98 by
   default), with the probe's default time limit: the verdict's median over its splits and their range, the
   baseline it chose and the next step it proposes. Target: the chosen network's median >= the target.
2. **Paired splits**: on each of `--splits` stratified 60/20/20 splits (seeds 0..n-1, each standardised on its
   own training part), the probe's classical baseline (`baseline.baseline`, the better by cross-validation
   of a tuned logistic regression and a tuned RBF SVM) and the recommendation's candidates, each trained by
   the probe's loop (`learning.train`); the advised network is the first candidate. Target: its mean within
   0.5 points of the baseline's mean, or above it.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from advisor.engine import recommend
from advisor.probe.learning import baseline as baselines
from advisor.probe.learning import samples, train
from advisor.probe.learning.plan import ProbePlan

SPEC: dict[str, Any] = {
    "task": "vision",
    "data": {"examples": 1797, "input_shape": [1, 8, 8], "outputs": 10},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
}
BUDGET_S = 120.0  # per training run of the paired splits; early stopping ends every run long before
WITHIN = 0.005  # half a point of accuracy


def product(spec: dict[str, Any], budget: float) -> dict[str, Any]:
    """The probe's own answer on the digits sample, as a worker runs it (its plan as running.make_plan
    builds it: the first shallow and the first deep candidate, every candidate offered to the next step)."""
    from advisor.probe.learning.pipeline import shallow_first

    candidates = recommend(spec)["candidates"]
    first = {
        d: next((i for i, c in enumerate(candidates) if c["depth"] == d), None) for d in ("shallow", "deep")
    }
    roles = {d: None if i is None else {"index": i, "candidate": candidates[i]} for d, i in first.items()}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "digits.npz"
        samples.save(samples.demo("digits"), path)
        plan = ProbePlan(
            str(path),
            "classify",
            float(spec["target"]["accuracy"]),
            int(spec["data"]["examples"]),
            roles["shallow"],
            roles["deep"],
            budget_s=budget,
            candidates=[{"index": i, "candidate": c} for i, c in enumerate(candidates)],
        )
        started, cpu = time.monotonic(), time.process_time()
        stages: dict[str, Any] = {}

        def keep(event: dict[str, Any]) -> None:
            if event["type"] == "stage":
                stages[event["stage"]] = event["data"]

        verdict = shallow_first(plan, keep)
    chosen = verdict["chosen"]
    return {
        "verdict": verdict,
        "baseline": {k: v for k, v in stages.get("baseline", {}).items() if k != "indices"},
        "seeds": stages.get("split", {}).get("seeds"),
        "chosen": chosen,
        "median": verdict.get(f"{chosen}_score") if chosen else None,
        "spread": (verdict.get("spread") or {}).get(chosen or ""),
        "met": verdict.get("met"),
        "seconds": time.monotonic() - started,
        "cpu_seconds": time.process_time() - cpu,
    }


def paired(spec: dict[str, Any], splits: int, budget: float) -> list[dict[str, Any]]:
    candidates = recommend(spec)["candidates"]
    sample = samples.demo("digits")
    rows = []
    for seed in range(splits):
        split = splits.split(sample, goal="classify", seed=seed)
        started = time.process_time()
        base = baselines.baseline(split, seed=seed)
        row: dict[str, Any] = {
            "seed": seed,
            "baseline": base["score"],
            "baseline_model": base["model"],
            "baseline_cpu_s": time.process_time() - started,
            "models": {m["model"]: m["score"] for m in base["models"]},
        }
        for index, cand in enumerate(candidates):
            if splits.trainable(cand, "classify"):
                continue
            started = time.process_time()
            run = train.train(cand, split, budget_s=budget, full_examples=spec["data"]["examples"], seed=seed)
            row[f"candidate{index}"] = {
                "family": cand["family"],
                "depth": cand["depth"],
                "score": run["score"],
                "train_score": run["train_score"],
                "epochs": len(run["epochs"]),
                "stopped": run["stopped"],
                "cpu_s": time.process_time() - started,
            }
        print(json.dumps(row, default=float), flush=True)
        rows.append(row)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = sorted(k for k in rows[0] if k.startswith("candidate"))
    base = [r["baseline"] for r in rows]
    answer: dict[str, Any] = {
        "splits": len(rows),
        "baseline_mean": statistics.fmean(base),
        "baseline_models": sorted({r["baseline_model"].split(" (")[0] for r in rows}),
        "by_model": {name: statistics.fmean(r["models"][name] for r in rows) for name in rows[0]["models"]},
        "candidates": {},
    }
    for key in keys:
        scores = [r[key]["score"] for r in rows]
        gaps = [r[key]["score"] - r["baseline"] for r in rows]
        answer["candidates"][key] = {
            "family": rows[0][key]["family"],
            "depth": rows[0][key]["depth"],
            "mean": statistics.fmean(scores),
            "min": min(scores),
            "max": max(scores),
            "mean_gap": statistics.fmean(gaps),
            "gap_sd": statistics.stdev(gaps) if len(gaps) > 1 else 0.0,
            "wins": sum(g > 0 for g in gaps),
            "ties": sum(g == 0 for g in gaps),
            "cpu_s_mean": statistics.fmean(r[key]["cpu_s"] for r in rows),
        }
    return answer


def report(answer: dict[str, Any], paired_summary: dict[str, Any] | None, target: float) -> str:
    lines = ["# bench probe: digits through the product's probe", ""]
    spread = answer["spread"] or {}
    median = answer["median"]
    low, high = spread.get("low", median), spread.get("high", median)
    lines += [
        f"Product (shallow_first, target {target}): chosen {answer['chosen']}, median {median:.4f} over "
        f"{spread.get('splits', 1)} splits (range {low:.4f}-{high:.4f}); met: {answer['met']}; "
        f"target median >= {target}: {'met' if median >= target else 'NOT met'}",
        f"Baseline chosen: {answer['baseline'].get('model')}, median "
        f"{(answer['baseline'].get('spread') or {}).get('median', answer['baseline'].get('score')):.4f}",
        f"Verdict: {answer['verdict']['text']}",
        f"Next step: {json.dumps(answer['verdict'].get('next'))}",
        f"Probe wall {answer['seconds']:.1f} s, CPU {answer['cpu_seconds']:.1f} s",
        "",
    ]
    if paired_summary:
        s = paired_summary
        lines += [
            f"## {s['splits']} paired splits: baseline mean {s['baseline_mean']:.4f} "
            f"({', '.join(f'{k} {v:.4f}' for k, v in s['by_model'].items())})",
            "",
            "| candidate | mean | min-max | mean gap to baseline | sd of gap | wins | within 0.5 pt/above |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for key, c in s["candidates"].items():
            ok = c["mean_gap"] >= -WITHIN
            name = f"{key} {c['depth']} {c['family'].upper()}"
            lines.append(
                f"| {name} | {c['mean']:.4f} | {c['min']:.4f}-{c['max']:.4f} | "
                f"{c['mean_gap'] * 100:+.2f} pt | {c['gap_sd'] * 100:.2f} pt | {c['wins']}/{s['splits']} | "
                f"{'yes' if ok else 'no'} |"
            )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    import torch

    from bench import machine

    parser = machine.run_parser("probe", __doc__)
    parser.add_argument("--target", type=float, default=0.98, help="the spec's accuracy target")
    parser.add_argument("--limit", type=float, default=90.0, help="the product probe's time limit (s)")
    parser.add_argument("--splits", type=int, default=10, help="paired splits (0: the product's answer only)")
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds per paired training run")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the worker's for small nets)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    info = machine.describe()
    spec = {**SPEC, "target": {"accuracy": args.target}}
    started = time.monotonic()
    answer = product(spec, args.limit)
    print(json.dumps({k: v for k, v in answer.items() if k != "verdict"}, default=float), flush=True)
    rows = paired(spec, args.splits, args.budget) if args.splits else []
    paired_summary = summary(rows) if rows else None
    text = report(answer, paired_summary, args.target)
    results = {"product": answer, "rows": rows, "summary": paired_summary}
    machine.close_run(args.out, ["probe", *argv], info, text, results, started=started, threads=args.threads)
    return 0
