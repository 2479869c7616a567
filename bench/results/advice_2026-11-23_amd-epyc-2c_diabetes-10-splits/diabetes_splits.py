"""Diabetes over ten splits: the advised FFN against the search's picks (SGD with momentum, half width) and
ridge regression, held-out R² per split. Scores only, no timings.

Rerun from the repository root: `PYTHONPATH=. nice -n 10 .venv/bin/python
bench/results/advice_2026-11-23_amd-epyc-2c_diabetes-10-splits/diabetes_splits.py` (2026-11-23 02:40-02:50
UTC, amd-epyc-2c, load 7-9.5, default allocator, one torch thread; output in rows.jsonl)."""

from __future__ import annotations

import json
import statistics
from typing import Any

import torch

from advisor.engine import recommend
from advisor.probe.learning import data, train
from bench import advice


def main() -> None:
    torch.set_num_threads(1)
    rows = []
    for seed in range(10):
        sample, spec, _ = advice.dataset("diabetes", seed)
        first = recommend(spec)["candidates"][0]
        split = data.split(sample, goal="regress", seed=seed)
        configs: dict[str, dict[str, Any]] = {"advised": first}
        for rate in (0.01, 0.03):
            narrow = advice.widen(first, 0.5)
            narrow["training"] = {
                **first["training"],
                "optimizer": "sgd",
                "learning_rate": rate,
                "momentum": 0.9,
            }
            configs[f"sgd {rate} x0.5"] = narrow
        decayed = dict(first)
        decayed["training"] = {**first["training"], "weight_decay": 1e-2, "optimizer": "adamw"}
        configs["adamw wd 0.01"] = decayed
        out: dict[str, Any] = {"seed": seed}
        for name, cand in configs.items():
            run = train.train(cand, split, seed=seed, full_examples=442, budget_s=60)
            out[name] = (run["score"], run["val_score"], len(run["epochs"]))  # test, validation, epochs
        out["ridge"] = data.baseline(split)["score"]
        print(json.dumps(out), flush=True)
        rows.append(out)
    for name in rows[0]:
        if name != "seed":
            values = [r[name][0] if isinstance(r[name], tuple) else r[name] for r in rows]
            print(name, f"mean {statistics.mean(values):.3f} median {statistics.median(values):.3f}")


if __name__ == "__main__":
    main()
