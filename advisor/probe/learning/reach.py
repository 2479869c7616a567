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
from collections.abc import Sequence
from typing import NotRequired, TypedDict

import numpy as np

from advisor.probe.learning import curve
from advisor.probe.learning.curve import CurveFit, SizePoint
from advisor.probe.learning.plan import EpochTime, ProbePlan
from advisor.probe.learning.split import ScoredRun, reported

Z90 = 1.645  # a two-sided 90% band


class SizeParams(TypedDict):
    a: float
    b: float


class SizeFit(TypedDict):
    """The size curve err(n) = a·n^-b fitted by `size_fit`: the score at full size with its 90% interval."""

    method: str  # "power_law" or "none"
    estimate: float | None
    low: float | None
    high: float | None
    params: NotRequired[SizeParams]


class Forecast(TypedDict):
    """`predict`'s answer: whether and when the full-size run reaches the target, or why that cannot be
    told."""

    method: str  # "declined", "sample" or "size_curve"
    reached: bool | None  # None: not known
    reason: str
    updates: NotRequired[int]
    epochs: NotRequired[int]
    fit: NotRequired[SizeFit | CurveFit]  # the size curve, where one was made
    certain: NotRequired[bool]  # False where the target lies inside the size curve's 90% interval
    seconds_to_target: NotRequired[float]  # the probe's, with a time per epoch
    basis: NotRequired[str | None]


class TimeToTarget(TypedDict):
    """The verdict's `time_to_target`: epochs (and seconds) to the target at full size, or a forecast."""

    role: str
    reached: bool
    epoch: int | None
    updates: int | None
    full_size_examples: int
    epochs_at_full_size: NotRequired[int]
    seconds_per_epoch: NotRequired[float]
    basis: NotRequired[str | None]
    seconds_to_target: NotRequired[float]
    caveat: NotRequired[str]
    forecast: NotRequired[Forecast]


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


def running_best(run: ScoredRun) -> list[tuple[int, float]]:
    """(updates, best held-out score so far) per scored epoch: monotone, so a noisy dip is no setback."""
    out: list[tuple[int, float]] = []
    best = -math.inf
    for row in run.get("epochs") or []:
        if row.get("test") is None:
            continue
        best = max(best, float(row["test"]))
        out.append((int(row["epoch"]) * int(run["steps_per_epoch"]), best))
    return out


def updates_to_ratio(run: ScoredRun, ratio: float) -> int | None:
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


def size_fit(points: Sequence[SizePoint], *, full_examples: int, test_examples: int) -> SizeFit:
    """err(n) = a·n^-b by least squares on log error, each point weighted by its binomial error; the score
    1 - err at `full_examples` with a 90% interval. `method` "none" with fewer than three sizes."""
    pts = sorted((p for p in points if p.get("score") is not None), key=lambda p: p["examples"])
    if len({p["examples"] for p in pts}) < 3:
        return {"method": "none", "estimate": None, "low": None, "high": None}
    n = np.array([p["examples"] for p in pts], dtype=np.float64)
    err = np.array(
        [max(1 - (p["score"] or 0.0), 0.5 / max(1, test_examples)) for p in pts]
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
    run: ScoredRun,
    points: Sequence[SizePoint],
    *,
    target: float,
    goal: str,
    full_train: int,
    batch_size: int,
    test_examples: int,
    fitted: SizeFit | CurveFit | None = None,
) -> Forecast:
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
    if first and first["reached"] and first["updates"] is not None:
        epochs = curve.full_size_epochs(first["updates"], batch_size=batch_size, full_examples=full_train)
        return {
            "method": "sample",
            "reached": True,
            "updates": first["updates"],
            "epochs": epochs,
            "reason": f"the sample reached {target:g} after {first['updates']} updates",
        }
    fit = fitted or size_fit(points, full_examples=full_train, test_examples=test_examples)
    if fit["method"] != "power_law" or fit["estimate"] is None or fit["low"] is None or fit["high"] is None:
        sizes = len({p["examples"] for p in points})
        return {
            "method": "declined",
            "fit": fit,
            "reached": None,
            "reason": f"the sample missed {target:g} and "
            + (
                f"a size curve needs 3 sizes ({sizes} given)"
                if sizes < 3
                else "its size curve could not be fitted"
            ),
        }
    ceiling, low, high = float(fit["estimate"]), fit["low"], fit["high"]
    span = f"{low:.3f}-{high:.3f}"
    # the point estimate decides; `certain` says whether the 90% interval lies wholly on one side
    certain = not (low < target <= high)
    doubt = "" if certain else f"; {target:g} lies inside that interval, so this is a best guess"
    if ceiling < target:
        return {
            "method": "size_curve",
            "fit": fit,
            "certain": certain,
            "reached": False,
            "reason": f"the size curve puts the best score at {full_train} examples at {ceiling:.3f} "
            f"(90% {span}), below {target:g}{doubt}",
        }
    ratio = (1 - target) / max(1 - ceiling, 1e-9)
    updates = updates_to_ratio(run, ratio)
    if updates is None:
        return {
            "method": "declined",
            "fit": fit,
            "certain": certain,
            "reached": None,
            "reason": "the sample's curve is flat",
        }
    epochs = curve.full_size_epochs(updates, batch_size=batch_size, full_examples=full_train)
    return {
        "method": "size_curve",
        "fit": fit,
        "certain": certain,
        "reached": True,
        "updates": updates,
        "epochs": epochs,
        "reason": f"the size curve puts the best score at {full_train} examples at {ceiling:.3f} (90% "
        f"{span}){doubt}; the sample's error came within {ratio:.2f} times its final error after {updates} "
        "updates",
    }


def time_to_target(
    plan: ProbePlan,
    role: str,
    run: ScoredRun,
    full_train: int,
    *,
    points: Sequence[SizePoint] | None = None,
    test_examples: int | None = None,
    fitted: CurveFit | None = None,
) -> TimeToTarget | None:
    """Epochs and seconds to the target at full size: `full_train` training examples, the same full size
    the learning curve extrapolates to. A run whose reported score (the median of its splits where
    repeated) misses the target has not reached it, even if one epoch's held-out score touched it (the
    verdict and this line must agree). Then, given the learning curve's `points`, `forecast` says whether
    and when the full size would (`predict`), or why that cannot be told; `caveat` says when the test
    split is too small to time the target at all."""
    reached = curve.epochs_to_target(run, plan.target)
    if reached is None:
        return None
    if reported(run) is None or (reported(run) or 0) < (plan.target or 0):
        reached = {"reached": False, "epoch": None, "updates": None}
    answer: TimeToTarget = {
        "role": role,
        "reached": reached["reached"],
        "epoch": reached["epoch"],
        "updates": reached["updates"],
        "full_size_examples": full_train,
    }
    if reached["reached"] and reached["updates"] is not None:
        epochs = curve.full_size_epochs(
            reached["updates"], batch_size=run["batch_size"], full_examples=full_train
        )
        answer["epochs_at_full_size"] = epochs
        per_epoch = plan.seconds_per_epoch.get(role) or EpochTime(seconds=None, basis=None)
        seconds = per_epoch.get("seconds")
        if seconds is not None:
            answer["seconds_per_epoch"] = seconds
            answer["basis"] = per_epoch.get("basis")
            answer["seconds_to_target"] = epochs * float(seconds)
    if test_examples is None or plan.target is None:
        return answer
    why = unresolvable(plan.target, test_examples, plan.goal)
    if reached["reached"]:
        if why:
            answer["caveat"] = why
        return answer
    forecast = predict(
        run,
        points or [],
        target=plan.target,
        goal=plan.goal,
        full_train=full_train,
        batch_size=run["batch_size"],
        test_examples=test_examples,
        fitted=fitted,  # the verdict's own estimate at full size: the page shows one number
    )
    forecast.pop("fit", None)
    per_epoch = plan.seconds_per_epoch.get(role) or EpochTime(seconds=None, basis=None)
    seconds = per_epoch.get("seconds")
    if forecast["reached"] and seconds is not None:
        forecast["seconds_to_target"] = forecast.get("epochs", 0) * float(seconds)
        forecast["basis"] = per_epoch.get("basis")
    answer["forecast"] = forecast
    return answer
