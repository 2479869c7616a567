"""Exploration: CPU seconds to the target of networks over time steps at chosen widths and batches, on bench
advice's splits, with the probe's loop timed by the process's CPU time; one JSON row per (item, seed).

    PYTHONPATH=. python bench/results/advice_amd-epyc-2c_time-first/explore_widths.py tokens-count \
        lstm:96,tcn:32,tcn:32@32 0,1

An item is FAMILY[:WIDTH][@BATCH]: lstm, gru or tcn, its units or channels (default: the rules'), its batch
(default: the rules')."""

from __future__ import annotations

import json
import sys
import time

import torch

from advisor.engine import recommend
from advisor.engine.candidate import to_candidate
from advisor.engine.families import GRU, LSTM, recurrent, temporal
from advisor.probe.learning import curve, data, train
from bench.advice_data import dataset

CELLS = {"lstm": LSTM, "gru": GRU}


def draft(item: str, clean: dict) -> tuple[dict, str]:
    family_width, _, batch = item.partition("@")
    family, _, width = family_width.partition(":")
    if family == "tcn":
        made = temporal._tcn(clean, int(width)) if width else temporal.tcn(clean)
    elif width:
        made = recurrent._recurrent(clean, CELLS[family], int(width))
    else:
        made = recurrent.recurrent(clean, CELLS[family])
    return made, batch


def main(name: str, items: list[str], seeds: list[int]) -> None:
    torch.set_num_threads(1)
    for seed in seeds:
        sample, spec, _ = dataset(name, seed)
        rec = recommend(spec)
        clean, target = rec["spec"], spec["target"]["accuracy"]
        split = data.split(sample, goal=clean["goal"], seed=seed, scale=not spec["data"].get("vocab_size"))
        train.train(
            rec["candidates"][-1], split, seed=seed, max_epochs=1, budget_s=60
        )  # torch's one-off costs
        for item in items:
            made, batch = draft(item, clean)
            candidate = to_candidate(made, clean)
            if batch:
                candidate["training"]["batch_size"] = int(batch)
            examples = spec["data"]["examples"]
            run = train.train(
                candidate, split, seed=seed, full_examples=examples, budget_s=400, clock=time.process_time
            )
            hit = curve.epochs_to_target(run, target)
            epoch = hit["epoch"] if hit and hit["reached"] else None
            rows = run["epochs"]
            row = {
                "data": name,
                "seed": seed,
                "item": item,
                "params": candidate["parameters"],
                "score": run["score"],
                "best_epoch": run["best_epoch"],
                "epochs": len(rows),
                "cpu_total": rows[-1]["seconds"],
                "ttt_epoch": epoch,
                "ttt_cpu": rows[epoch - 1]["seconds"] if epoch else None,
                "per_epoch_train": rows[-1]["train_seconds"] / len(rows),
                "stopped": run["stopped"],
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","), [int(s) for s in (sys.argv[3:] or ["0"])[0].split(",")])
