"""`python -m bench advice`: does the advice work? The first candidate trained exactly as recommended
against a tuned reference on the same split, and the probe's predicted time to the target against a full
run's.

For every data set (scikit-learn's bundled digits, iris, wine, breast cancer and diabetes; two synthetic
token sequence tasks whose best achievable accuracy is known by construction; one synthetic generation task,
`mixture`, scored by a two-sample test against its true distribution: `bench/advice_gen.py`) and every seed:
- **advised**: `recommend(spec)`'s first candidate, trained by the probe's own loop (`learning.train`: the
  candidate's layers, init, optimiser, learning rate, batch and epochs; early stopping on the validation
  split; the held-out test score at the best validation epoch).
- **search**: the same family tuned the way a search would (optimiser x learning rate x width, each run early
  stopped; the configuration with the best validation score is reported on the test split), and the best of
  scikit-learn's classical models (logistic/ridge, RBF SVM, gradient boosting; each tuned by cross-validation
  on the training split).
- **time to the target** (`bench/advice_time.py`): the probe's prediction from a sample (a third of the
  training split; where it misses the target, a size curve from two nested sub-samples of it; or a decline
  where the test split cannot resolve the target) against the advised run on the whole training split (its
  first epoch at the target, and the seconds to it).

The gap is advised minus the best reference (points of accuracy or R²); the cost is the advised run's seconds
over the search's, wall and CPU (this process's: other processes on a shared machine inflate it far less).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from advisor.engine import recommend
from advisor.engine.variation import scaled
from advisor.probe.learning import split as splits
from advisor.probe.learning import train
from bench import advice_time
from bench.advice_data import GENERATION, SEQUENCES, dataset
from bench.advice_variants import VARIANTS

SEARCH_RATES = {"adam": (3e-4, 1e-3, 3e-3, 1e-2), "sgd": (3e-3, 1e-2, 3e-2, 1e-1)}
SEARCH_WIDTHS = (0.5, 1.0, 2.0)
BUDGET_S = 120.0  # per training run; early stopping ends every run here long before


# --- the search -----------------------------------------------------------------------------------------


def _run(candidate: dict[str, Any], split: splits.Split, seed: int, **kwargs: Any) -> dict[str, Any]:
    return train.train(candidate, split, seed=seed, **{"budget_s": BUDGET_S, **kwargs})


def search(
    candidate: dict[str, Any], split: splits.Split, seed: int, examples: int, budget: float
) -> dict[str, Any]:
    started, cpu = time.monotonic(), time.process_time()
    best: dict[str, Any] | None = None
    runs = epochs = 0
    for optimiser, rates in SEARCH_RATES.items():
        for rate in rates:
            for factor in SEARCH_WIDTHS:
                cand = scaled(candidate, factor) if factor != 1 else dict(candidate)
                training = {**candidate["training"], "optimizer": optimiser, "learning_rate": rate}
                training.pop("momentum", None)
                if optimiser == "sgd":
                    training["momentum"] = 0.9
                cand["training"] = training
                run = _run(cand, split, seed, full_examples=examples, budget_s=budget)
                runs += 1
                epochs += len(run["epochs"])
                if run["val_score"] is not None and (best is None or run["val_score"] > best["val_score"]):
                    best = {**run, "config": f"{optimiser} lr {rate:g} width x{factor:g}"}
    assert best is not None
    return {
        "score": best["score"],
        "config": best["config"],
        "runs": runs,
        "epochs": epochs,
        "seconds": time.monotonic() - started,
        "cpu_seconds": time.process_time() - cpu,
    }


def classical(split: splits.Split) -> dict[str, Any]:
    """The best of scikit-learn's usual models, each tuned by 3-fold cross-validation on the training split,
    chosen by the validation split."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC, SVR

    started = time.monotonic()
    classify = split.goal == "classify"
    models: dict[str, tuple[Any, dict[str, list[Any]]]] = {
        "linear": (
            (LogisticRegression(max_iter=2000), {"C": [0.1, 1, 10]})
            if classify
            else (Ridge(), {"alpha": [0.1, 1, 10]})
        ),
        "rbf svm": ((SVC() if classify else SVR()), {"C": [1, 10, 100], "gamma": ["scale", 0.01]}),
        "gradient boosting": (
            (HistGradientBoostingClassifier() if classify else HistGradientBoostingRegressor()),
            {"learning_rate": [0.05, 0.1]},
        ),
    }
    scores: dict[str, dict[str, float]] = {}
    for name, (model, grid) in models.items():
        y_train = split.y_train if classify else np.ravel(split.y_train)
        fitted = GridSearchCV(model, grid, cv=3).fit(split.x_train, y_train)
        pick = {}
        for part, x, y in (("val", split.x_val, split.y_val), ("test", split.x_test, split.y_test)):
            assert y is not None
            pick[part] = splits.score(split.goal, y if classify else y.reshape(len(y), -1), fitted.predict(x))
        scores[name] = pick
    best = max(scores, key=lambda k: scores[k]["val"])
    return {
        "linear": scores["linear"]["test"],
        "best": best,
        "score": scores[best]["test"],
        "seconds": time.monotonic() - started,
    }


# --- one data set ----------------------------------------------------------------------------------------


def evaluate(name: str, seed: int, *, with_search: bool, budget: float = BUDGET_S) -> dict[str, Any]:
    sample, spec, achievable = dataset(name, seed)
    rec = recommend(spec)
    first = rec["candidates"][0]
    if name in GENERATION:
        from bench import advice_gen

        return {
            "data": name,
            "seed": seed,
            "target": None,
            "first": f"{first['family']} {first['depth']} {first['hidden_sizes']}",
            **advice_gen.evaluate(first, spec["data"]["examples"], seed),
        }
    goal = rec["spec"]["goal"]
    split = splits.split(sample, goal=goal, seed=seed, scale=not spec["data"].get("vocab_size"))
    examples = int(spec["data"]["examples"])
    # one epoch first, untimed: the process's first training run pays torch's one-off costs (lazy kernel and
    # optimiser set-up), which would land on the advised run alone and not on the search's 24 runs
    _run(first, split, seed, max_epochs=1, budget_s=budget)
    cpu = time.process_time()  # this process's CPU time: what other processes on the machine do not inflate
    advised = _run(first, split, seed, full_examples=examples, budget_s=budget)
    cpu = time.process_time() - cpu
    row: dict[str, Any] = {
        "data": name,
        "seed": seed,
        "metric": split.metric,
        "target": spec["target"]["accuracy"],
        "achievable": achievable,
        "first": f"{first['family']} {first['depth']} {first['hidden_sizes']}",
        "parameters": first["parameters"],
        "size_warning": any(r["rule"] == "size.oversize" for r in first["reasons"]),
        "training": {k: first["training"][k] for k in ("optimizer", "learning_rate", "epochs", "batch_size")},
        "advised": {
            "score": advised["score"],
            "seconds": advised["seconds"],
            "cpu_seconds": cpu,
            "epochs": len(advised["epochs"]),
            "best_epoch": advised["best_epoch"],
            "stopped": advised["stopped"],
        },
        "classical": classical(split),
    }
    if with_search:
        row["search"] = search(first, split, seed, examples, budget)
    target = spec["target"]["accuracy"]
    row["time_to_target"] = advice_time.time_to_target(
        first, split, advised, target, seed=seed, examples=examples, budget=budget
    )
    return row


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for name in dict.fromkeys(r["data"] for r in rows):
        mine = [r for r in rows if r["data"] == name]

        def med(get: Any, rows: list[dict[str, Any]] = mine) -> float | None:
            values = [v for v in (get(r) for r in rows) if v is not None]
            return statistics.median(values) if values else None

        # a generation task has no search: its reference is the fitted mixture (bench/advice_gen.py)
        reference = med(
            lambda r: (
                max(r["classical"]["score"], r["search"]["score"])
                if "search" in r
                else (r["classical"]["score"] if r["data"] in GENERATION else None)
            )
        )
        advised = med(lambda r: r["advised"]["score"])
        table.append(
            {
                "data": name,
                "first": mine[0]["first"],
                "advised": advised,
                "achievable": med(lambda r: r.get("achievable")),
                "linear": med(lambda r: r["classical"]["linear"]),
                "classical": med(lambda r: r["classical"]["score"]),
                "search": med(lambda r: r["search"]["score"] if "search" in r else None),
                "gap_points": None if reference is None or advised is None else 100 * (advised - reference),
                "cost_share": med(
                    lambda r: r["advised"]["seconds"] / r["search"]["seconds"] if "search" in r else None
                ),
                "cost_share_cpu": med(
                    lambda r: (
                        r["advised"]["cpu_seconds"] / r["search"]["cpu_seconds"]
                        if "search" in r and "cpu_seconds" in r["search"]
                        else None
                    )
                ),
                "ttt_error_seconds": med(lambda r: r["time_to_target"].get("error_seconds")),
                "ttt_error_epochs": med(lambda r: r["time_to_target"].get("error_epochs")),
                "seeds": len(mine),
            }
        )
    return table


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def report(table: list[dict[str, Any]]) -> str:
    head = (
        "| data | first candidate | advised | achievable | linear | best classical | search | gap (points) "
        "| cost share (wall / CPU) | time-to-target error (s / epochs) |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for t in table:
        lines.append(
            f"| {t['data']} | {t['first']} | {_fmt(t['advised'], '.3f')} | {_fmt(t['achievable'], '.3f')} "
            f"| {_fmt(t['linear'], '.3f')} "
            f"| {_fmt(t['classical'], '.3f')} | {_fmt(t['search'], '.3f')} | {_fmt(t['gap_points'], '+.1f')} "
            f"| {_fmt(t['cost_share'], '.1%')} / {_fmt(t.get('cost_share_cpu'), '.1%')} "
            f"| {_fmt(t['ttt_error_seconds'], '+.0%')} / "
            f"{_fmt(t['ttt_error_epochs'], '+.0%')} |"
        )
    return "\n".join(lines)


DATASETS = "digits,iris,wine,breast_cancer,diabetes,tokens-count,tokens-order,adding,digits-rows,mixture"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench advice", description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=DATASETS, help=f"comma-separated (default {DATASETS})")
    parser.add_argument("--seeds", type=int, default=3, help="stratified 60/20/20 splits per data set")
    parser.add_argument("--no-search", action="store_true", help="skip the tuned search (fast check)")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (1: small networks run fastest)"
    )
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds per training run at most")
    parser.add_argument("--out", type=Path, default=None, help="write results.json and table.md here")
    parser.add_argument(
        "--variants",
        default=None,
        help="instead: the first candidate with these overrides, scores per split in variants.jsonl; one of "
        + ", ".join(VARIANTS)
        + " (bench/advice_variants.py)",
    )
    parser.add_argument(
        "--versus",
        type=Path,
        default=None,
        help="instead: today's first candidate against an earlier engine's (stored in this JSON file), CPU "
        "seconds to the target on the same splits (bench/advice_versus.py); --data defaults to "
        + ",".join(SEQUENCES),
    )
    parser.add_argument(
        "--store-first",
        metavar="COMMIT",
        default=None,
        help="instead: store COMMIT's first candidates for the data sets' specs in the file --out names",
    )
    args = parser.parse_args(argv)
    if args.store_first is not None or args.versus is not None:
        from bench import advice_versus

        names = SEQUENCES if args.data == DATASETS else tuple(args.data.split(","))
        if args.store_first is not None:
            if args.out is None:
                parser.error("--store-first needs --out FILE")
            advice_versus.store_first(args.store_first, list(names), args.out, argv)
            return 0
    import torch

    from bench import machine

    torch.set_num_threads(args.threads)
    if args.versus is not None:
        from bench import advice_versus

        advice_versus.run(list(names), args.seeds, args.versus, args.out, argv)
        return 0
    if args.variants is not None:
        from bench import advice_variants

        names = args.variants.split(",")
        advice_variants.run(args.data.split(","), args.seeds, names, args.budget, args.out)
        return 0
    info = machine.describe()
    started = time.monotonic()
    rows = []
    for name in args.data.split(","):
        for seed in range(args.seeds):
            row = evaluate(name, seed, with_search=not args.no_search, budget=args.budget)
            print(json.dumps(row, default=float), flush=True)
            rows.append(row)
    table = summarise(rows)
    text = report(table)
    print(text)
    elapsed = time.monotonic() - started
    print(f"{elapsed:.0f} s in all; load {os.getloadavg()}; allocator {info['allocator']}")
    if args.out is not None:
        results = {"rows": rows, "table": table}
        machine.save(args.out, ["advice", *argv], info, text, results, seconds=elapsed, threads=args.threads)
    return 0 if all(not math.isnan(t["advised"] or 0) for t in table) else 1
