"""The curve step (pipeline.py, step 6): the learning curve, the score at growing shares of the sample
(`learning_curve`: the network chosen trained again on each share), fitted with an inverse power law
score(n) = a - b * n^(-c), to estimate the score at the data size the spec declares, with an interval.

The interval is honest about what is known: each point's own sampling error (a binomial standard error on
the held-out test split) weights the fit, the fitted parameters' covariance is propagated by Monte Carlo
to the full data size, and where the fit is not determined the interval says so by spanning everything
still possible.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

from advisor.contract import Candidate
from advisor.probe.learning.split import ScoredRun, Split, subsample

if TYPE_CHECKING:
    from advisor.probe.learning.clock import Clock
    from advisor.probe.learning.plan import ProbePlan

INTERVAL = 0.9  # the central share of the Monte Carlo predictions reported as the interval
DRAWS = 4000


class SizePoint(TypedDict):
    """A score at a number of training examples: what a size curve is fitted to."""

    examples: int
    score: float | None


class CurvePoint(SizePoint):
    """A point of the probe's learning curve: a share of the training split, and how its run ended."""

    fraction: float
    epochs: int
    stopped: str


class CurveParams(TypedDict):
    a: float
    b: float
    c: float


class LinePoint(TypedDict):
    examples: float
    score: float


class CurveFit(TypedDict):
    """The estimate at full size (`examples` training examples) with its interval; as the probe's stage
    `curve` and the verdict's `expected`, also its points, the fitted line and the network's family."""

    method: str  # "power_law", "measured", "bounds" or "none"
    examples: int
    estimate: float | None
    low: float | None
    high: float | None
    interval: NotRequired[float]
    params: NotRequired[CurveParams]  # power_law only
    points: NotRequired[list[CurvePoint]]
    line: NotRequired[list[LinePoint]]
    family: NotRequired[str | None]


class Reached(TypedDict):
    """Whether and when a run's held-out score first reached the target on the sample."""

    reached: bool
    epoch: int | None
    updates: int | None


def _law(n: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    out: np.ndarray = a - b * np.power(n, -c)
    return out


def point_error(score: float, test_examples: int) -> float:
    """A score's standard error on `test_examples` held-out examples (binomial; floored at half a step)."""
    p = min(max(score, 0.0), 1.0)
    return max(math.sqrt(p * (1 - p) / max(test_examples, 1)), 0.5 / max(test_examples, 1))


def fit(
    points: Sequence[SizePoint], *, full_examples: int, test_examples: int, upper: float = 1.0
) -> CurveFit:
    """`points`: [{"examples": n_train, "score": s}, ...]. Returns the estimate at `full_examples` with its
    interval, the parameters, and `method` ("power_law", "measured" when the sample is the full size, or
    "bounds" when too few points or a failed fit leave only the range from the best score seen to `upper`)."""
    pts = sorted((p for p in points if p.get("score") is not None), key=lambda p: p["examples"])
    if not pts:
        return {"method": "none", "examples": full_examples, "estimate": None, "low": None, "high": None}
    n = np.array([p["examples"] for p in pts], dtype=np.float64)
    s = np.array([p["score"] for p in pts], dtype=np.float64)
    last = float(s[-1])
    sigma = np.array([point_error(v, test_examples) for v in s])
    if full_examples <= n[-1]:
        half = 1.645 * sigma[-1]
        return _answer("measured", full_examples, last, last - half, last + half, upper)
    if len(pts) < 3 or len(set(n)) < 3:
        return _answer("bounds", full_examples, last, float(s.max()), upper, upper)
    from scipy.optimize import curve_fit

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params, cov = curve_fit(
                _law,
                n,
                s,
                p0=(min(upper, s.max() + 0.02), max(s.max() - s.min(), 0.01) * n[0] ** 0.5, 0.5),
                sigma=sigma,
                absolute_sigma=True,
                bounds=([-np.inf, 0.0, 0.01], [upper, np.inf, 3.0]),
                maxfev=20000,
            )
    except (RuntimeError, ValueError):
        return _answer("bounds", full_examples, last, float(s.max()), upper, upper)
    if not np.all(np.isfinite(cov)):
        return _answer("bounds", full_examples, last, float(s.max()), upper, upper)
    rng = np.random.default_rng(0)
    draws = rng.multivariate_normal(params, cov, size=DRAWS, check_valid="ignore")
    draws[:, 1] = np.maximum(draws[:, 1], 0.0)  # the curve never falls with more data
    draws[:, 2] = np.clip(draws[:, 2], 0.01, 3.0)
    draws[:, 0] = np.minimum(draws[:, 0], upper)
    at_full = draws[:, 0] - draws[:, 1] * full_examples ** (-draws[:, 2])
    tail = (1 - INTERVAL) / 2
    low, high = np.quantile(at_full, [tail, 1 - tail])
    estimate = float(_law(np.array([full_examples]), *params)[0])
    # More data does not make a model worse on average: the sample's own score bounds the estimate below.
    floor = last - 1.645 * sigma[-1]
    answer = _answer(
        "power_law", full_examples, max(estimate, last), max(float(low), floor), float(high), upper
    )
    answer["params"] = {"a": float(params[0]), "b": float(params[1]), "c": float(params[2])}
    return answer


def _answer(method: str, examples: int, estimate: float, low: float, high: float, upper: float) -> CurveFit:
    low, high = min(low, estimate), max(high, estimate)
    return {
        "method": method,
        "examples": examples,
        "estimate": min(estimate, upper),
        "low": min(low, upper),
        "high": min(high, upper),
        "interval": INTERVAL,
    }


def curve_points(fit_result: CurveFit, *, start: int, count: int = 24) -> list[LinePoint]:
    """The fitted curve sampled on a log scale from `start` to the full size, for plotting."""
    params = fit_result.get("params")
    if not params or fit_result["examples"] <= start:
        return []
    ns = np.geomspace(max(start, 1), fit_result["examples"], count)
    ys = _law(ns, params["a"], params["b"], params["c"])
    return [{"examples": float(a), "score": float(b)} for a, b in zip(ns, ys, strict=True)]


def epochs_to_target(run: ScoredRun, target: float | None) -> Reached | None:
    """The first epoch whose held-out score reached the target on the sample (test scores exist at the epochs
    that improved on validation), in epochs and in updates; the updates also give the epochs at the full data
    size (an epoch there makes more updates)."""
    if target is None or not run.get("epochs"):
        return None
    for row in run["epochs"]:
        if row.get("test") is not None and row["test"] >= target:
            updates = int(row["epoch"]) * int(run["steps_per_epoch"])
            return {"reached": True, "epoch": int(row["epoch"]), "updates": updates}
    return {"reached": False, "epoch": None, "updates": None}


def full_size_epochs(updates: int, *, batch_size: int, full_examples: int) -> int:
    return max(1, math.ceil(updates / max(1, math.ceil(full_examples / batch_size))))


# --- the step ----------------------------------------------------------------------------------------


def learning_curve(
    candidate: Candidate, run: ScoredRun, split: Split, plan: ProbePlan, clock: Clock, *, full_train: int
) -> CurveFit:
    """The network chosen trained again on each of the plan's shares of the training split (stratified;
    validation and test whole), its own run the last point, fitted and extrapolated to `full_train`
    training examples; its stage `curve`, sent as each point comes."""
    # torch, through the train step, only here: the verdict and the pages read this module's types without it
    from advisor.probe.learning.train import train

    points: list[CurvePoint] = []
    n_train = len(split.x_train)
    fractions = sorted(f for f in plan.fractions if 0 < f < 1)
    # As many updates as the full run needed to reach its best, with room to spare: a smaller share of the
    # sample is held back only by fewer examples, not by fewer updates.
    updates = 2 * max(1, int(run["best_epoch"] or 1)) * int(run["steps_per_epoch"])
    for i, fraction in enumerate(fractions):
        if clock.stop():
            break
        sub = subsample(split, fraction, seed=plan.seed)
        if len(sub.x_train) >= n_train:
            continue
        clock.progress(f"learning curve: {len(sub.x_train)} of {n_train} training examples")
        part = train(
            candidate,
            sub,
            budget_s=clock.left() * 0.9 / (len(fractions) - i),
            full_examples=plan.full_examples,
            max_updates=updates,
            seed=plan.seed,
            should_stop=clock.stop,
            device=plan.device,
        )
        if part["score"] is not None:
            points.append(
                {
                    "fraction": fraction,
                    "examples": len(sub.x_train),
                    "score": part["score"],
                    "epochs": len(part["epochs"]),
                    "stopped": part["stopped"],
                }
            )
            clock.stage("curve", {"points": points, "family": candidate.get("family")})
    points.append(
        {
            "fraction": 1.0,
            "examples": n_train,
            "score": run["score"],
            "epochs": len(run["epochs"]),
            "stopped": run["stopped"],
        }
    )
    fitted = fit(points, full_examples=full_train, test_examples=len(split.x_test))
    fitted["points"] = points
    fitted["line"] = curve_points(fitted, start=points[0]["examples"])
    fitted["family"] = candidate.get("family")
    clock.stage("curve", fitted)
    return fitted
