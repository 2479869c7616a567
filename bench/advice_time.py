"""Time to the target in `python -m bench advice`: the probe's prediction from a sample of the training
split against the advised full-size run's first epoch at the target.

The sample is a third of the training split (validation and test stay whole). Its run gives the epoch curve;
where it misses the target, two nested sub-samples of it (a quarter and a half, each capped at twice the
updates the sample needed for its best) give the size curve, and `advisor.probe.learning.reach` predicts
whether and when the full size reaches the target, or declines and says why. Seconds: the sample's step time
times the full size's steps, plus the per-epoch scoring of the (whole) validation and test splits, which
costs the same at both sizes.
"""

from __future__ import annotations

import math
from typing import Any

from advisor.probe.learning import curve, reach, train
from advisor.probe.learning import split as splits

SAMPLE_SHARE = 1 / 3  # the probe's sample, as a share of the training split
CURVE_SHARES = (1 / 4, 1 / 2)  # nested sub-samples of the sample for the size curve


def time_to_target(
    candidate: dict[str, Any],
    split: splits.Split,
    full: dict[str, Any],
    target: float,
    *,
    seed: int,
    examples: int,
    budget: float,
) -> dict[str, Any]:
    sample = splits.subsample(split, SAMPLE_SHARE, seed=seed)
    run = train.train(candidate, sample, seed=seed, full_examples=examples, budget_s=budget)
    points = [{"examples": len(sample.x_train), "score": run["score"]}]
    spent = run["seconds"]
    first = curve.epochs_to_target(run, target)
    if not (first and first["reached"]) and not reach.unresolvable(target, len(split.x_test), split.goal):
        cap = 2 * max(1, int(run["best_epoch"] or 1)) * int(run["steps_per_epoch"])
        for share in CURVE_SHARES:
            sub = splits.subsample(sample, share, seed=seed)
            part = train.train(
                candidate, sub, seed=seed, full_examples=examples, max_updates=cap, budget_s=budget
            )
            spent += part["seconds"]
            if part["score"] is not None:
                points.append({"examples": len(sub.x_train), "score": part["score"]})
    forecast = reach.predict(
        run,
        points,
        target=target,
        goal=split.goal,
        full_train=len(split.x_train),
        batch_size=run["batch_size"],
        test_examples=len(split.x_test),
    )
    fit = forecast.pop("fit", None)
    row: dict[str, Any] = {
        "sample_examples": len(sample.x_train),
        "sample_seconds": spent,
        "method": forecast["method"],
        "reason": forecast["reason"],
        "size_curve": points,
        "ceiling": None if fit is None else {k: fit.get(k) for k in ("estimate", "low", "high", "method")},
        "predicted_reached": forecast["reached"],
        "certain": forecast.get("certain"),
        "predicted": None,
    }
    if forecast["reached"]:
        steps = math.ceil(len(split.x_train) / run["batch_size"])
        epochs = int(forecast["epochs"])
        # the sample's steps time the full size's steps; scoring the (whole) validation and test splits
        # after each epoch costs the same at both sizes, so it is added per epoch, not per step
        last = run["epochs"][-1]
        per_step = last["train_seconds"] / (len(run["epochs"]) * run["steps_per_epoch"])
        scoring = (last["seconds"] - last["train_seconds"]) / len(run["epochs"])
        row["predicted"] = {"epochs": epochs, "seconds": epochs * (steps * per_step + scoring)}
    actual = curve.epochs_to_target(full, target)
    if actual and actual["reached"]:
        epoch = actual["epoch"]
        row["actual"] = {"epochs": epoch, "seconds": full["epochs"][epoch - 1]["seconds"]}
    else:
        row["actual"] = None
    # a prediction of "not reached" is right when the full run did not reach the target either
    row["reached_right"] = (
        None if forecast["reached"] is None else forecast["reached"] == (row["actual"] is not None)
    )
    if row["predicted"] and row["actual"]:
        row["error_epochs"] = row["predicted"]["epochs"] / row["actual"]["epochs"] - 1
        row["error_seconds"] = row["predicted"]["seconds"] / row["actual"]["seconds"] - 1
    return row
