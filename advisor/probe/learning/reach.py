"""When the full-size run first reaches the target: predicted from the sample's runs, or declined with why.

Three cases, in order:
1. **Unresolvable**: on a held-out split of n examples a 90% binomial band around the target is
   ±1.645·sqrt(t(1-t)/n). Where that half-width is at least the room above the target (1 - t), even a perfect
   score is not clearly above it: which epoch first "reaches" the target is decided by one or two examples,
   at the sample and at full size alike, so no epoch count is predicted (iris: 30 test examples at 0.95,
   ±0.065 against 0.05 of room).
2. **Reached on the sample**: the updates to the sample's first epoch at the target, as epochs at full size
   (an epoch there makes more updates: `curve.full_size_epochs`).
3. **Not reached on the sample**: a sample's ceiling is below the full size's. The size curve says whether
   the full size reaches the target: the error (1 - score) of the best epoch against training examples over
   nested sub-samples, fitted as a power law err(n) = a·n^-b (Hestness et al. 2017, "Deep Learning Scaling is
   Predictable, Empirically": error falls as a power of the data size until an irreducible floor). The floor
   c of a·n^-b + c is fixed at 0: three noisy points within a factor of 4 do not determine it (digits, three
   splits, sub-samples of 90/180/360 examples: a free floor put the full size at 0.966, 0.987, 0.966 where
   the runs reached 0.972, 0.989, 0.992; no floor at 0.978, 0.989, 0.978), so the extrapolation, a factor of
   3 at most, is optimistic where a floor is near. The probe passes its own learning-curve fit instead (the
   one its verdict shows), so its page gives one score at full size.
   The fit is weighted by each point's binomial error and its 90% interval reported. If the estimate
   reaches the target, the epoch curve says when: the full-size run's error is taken to shrink towards its
   ceiling by the same factor as the sample's does after as many updates (learning curves are straight in
   log error), so the target is reached at the first update where the sample's best-so-far error is within
   (1 - target) / (1 - full-size estimate) times its final error. With fewer than three sizes nothing is
   predicted and the answer says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from advisor.probe.learning import curve

Z90 = 1.645  # a two-sided 90% band


def band(target: float, test_examples: int) -> float:
    """Half-width of the 90% binomial band of an accuracy at the target on `test_examples`."""
    return Z90 * math.sqrt(target * (1 - target) / max(1, test_examples))


def unresolvable(target: float, test_examples: int, goal: str) -> str | None:
    """Why the held-out split cannot time the target, or None. Only accuracies have a binomial band; an R²
    target is always attempted."""
    if goal != "classify":
        return None
    half = band(target, test_examples)
    if half < 1 - target:
        return None
    return (
        f"the held-out split has {test_examples} examples: a 90% band around {target:g} is ±{half:.3f}, "
        f"wider than the {1 - target:.3f} between the target and a perfect score, so the first epoch at "
        "the target is decided by one or two examples"
    )


def running_best(run: dict[str, Any]) -> list[tuple[int, float]]:
    """(updates, best held-out score so far) per scored epoch: monotone, so a noisy dip is no setback."""
    out: list[tuple[int, float]] = []
    best = -math.inf
    for row in run.get("epochs") or []:
        if row.get("test") is None:
            continue
        best = max(best, float(row["test"]))
        out.append((int(row["epoch"]) * int(run["steps_per_epoch"]), best))
    return out


def updates_to_ratio(run: dict[str, Any], ratio: float) -> int | None:
    """The first update at which the sample's best-so-far error (1 - score) is within `ratio` times its final
    (smallest) error; None when its curve is empty or never leaves chance."""
    rows = running_best(run)
    if not rows or rows[-1][1] <= rows[0][1]:
        return None
    final = 1 - rows[-1][1]
    for updates, best in rows:
        if 1 - best <= ratio * final + 1e-9:
            return updates
    return None


def size_fit(points: list[dict[str, Any]], *, full_examples: int, test_examples: int) -> dict[str, Any]:
    """err(n) = a·n^-b by least squares on log error, each point weighted by its binomial error; the score
    1 - err at `full_examples` with a 90% interval. `method` "none" with fewer than three sizes."""
    pts = sorted((p for p in points if p.get("score") is not None), key=lambda p: p["examples"])
    if len({p["examples"] for p in pts}) < 3:
        return {"method": "none", "estimate": None, "low": None, "high": None}
    n = np.array([p["examples"] for p in pts], dtype=np.float64)
    err = np.array(
        [max(1 - p["score"], 0.5 / max(1, test_examples)) for p in pts]
    )  # a perfect score: half a step
    sigma = np.array([curve.point_error(1 - e, test_examples) / e for e in err])  # of log error
    x = np.stack([np.ones_like(n), np.log(n)], axis=1)  # [points, 2]
    w = 1 / sigma**2
    cov = np.linalg.inv(x.T @ (x * w[:, None]))  # [2, 2]
    coef = cov @ (x.T @ (w * np.log(err)))
    coef[1] = min(coef[1], 0.0)  # more data does not raise the error
    at = np.array([1.0, math.log(full_examples)])
    mean, sd = float(at @ coef), math.sqrt(float(at @ cov @ at))
    return {
        "method": "power_law",
        "estimate": 1 - math.exp(mean),
        "low": 1 - math.exp(mean + Z90 * sd),
        "high": 1 - math.exp(mean - Z90 * sd),
        "params": {"a": math.exp(coef[0]), "b": -float(coef[1])},
    }


def predict(
    run: dict[str, Any],
    points: list[dict[str, Any]],
    *,
    target: float,
    goal: str,
    full_train: int,
    batch_size: int,
    test_examples: int,
    fitted: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`run`: the sample's run (per-epoch held-out scores); `points`: the size curve's
    [{"examples", "score"}] with the sample's own run among them; `fitted`: a size curve already fitted
    to them ({"method", "estimate", "low", "high"}), used instead of fitting one, so that a page showing
    both never gives two scores at full size. Returns `method` ("declined", "sample",
    "size_curve"), `reached` (True, False, or None when not known), `epochs` and `updates` at full size
    when reached, `reason` in words, and the size curve's `fit` where one was made, with `certain` False
    when the target lies inside its 90% interval."""
    why = unresolvable(target, test_examples, goal)
    if why:
        return {"method": "declined", "reached": None, "reason": why}
    first = curve.epochs_to_target(run, target)
    if first and first["reached"]:
        epochs = curve.full_size_epochs(first["updates"], batch_size=batch_size, full_examples=full_train)
        return {
            "method": "sample",
            "reached": True,
            "updates": first["updates"],
            "epochs": epochs,
            "reason": f"the sample reached {target:g} after {first['updates']} updates",
        }
    fit = fitted or size_fit(points, full_examples=full_train, test_examples=test_examples)
    answer: dict[str, Any] = {"method": "size_curve", "fit": fit}
    if fit["method"] != "power_law":
        sizes = len({p["examples"] for p in points})
        return {
            **answer,
            "method": "declined",
            "reached": None,
            "reason": f"the sample missed {target:g} and "
            + (
                f"a size curve needs 3 sizes ({sizes} given)"
                if sizes < 3
                else "its size curve could not be fitted"
            ),
        }
    ceiling = float(fit["estimate"])
    span = f"{fit['low']:.3f}-{fit['high']:.3f}"
    # the point estimate decides; `certain` says whether the 90% interval lies wholly on one side
    answer["certain"] = not (fit["low"] < target <= fit["high"])
    doubt = "" if answer["certain"] else f"; {target:g} lies inside that interval, so this is a best guess"
    if ceiling < target:
        return {
            **answer,
            "reached": False,
            "reason": f"the size curve puts the best score at {full_train} examples at {ceiling:.3f} "
            f"(90% {span}), below {target:g}{doubt}",
        }
    ratio = (1 - target) / max(1 - ceiling, 1e-9)
    updates = updates_to_ratio(run, ratio)
    if updates is None:
        return {**answer, "method": "declined", "reached": None, "reason": "the sample's curve is flat"}
    epochs = curve.full_size_epochs(updates, batch_size=batch_size, full_examples=full_train)
    return {
        **answer,
        "reached": True,
        "updates": updates,
        "epochs": epochs,
        "reason": f"the size curve puts the best score at {full_train} examples at {ceiling:.3f} (90% "
        f"{span}){doubt}; the sample's error came within {ratio:.2f} times its final error after {updates} "
        "updates",
    }
