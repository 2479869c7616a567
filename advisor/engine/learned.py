"""The learned correction: a regressor of log(measured / profiled seconds per batch) from what the cost model
knows about a configuration (scikit-learn, imported only when fitting or predicting, so the engine's import
stays cheap). Rows come from the reliable measurements on a profiled device; the prediction is the profiled
figure times the predicted ratio, clipped to a factor of CLIP either way, as NeuSight bounds its learned
utilisation by the roofline: the correction may sharpen the profile's figure, never replace it.

It must earn its place: `fit_correction` cross-validates it with the networks left out (GroupKFold) and
compares its median error with the profile's own on the same rows; only where it is lower is it `used`,
otherwise the profile stands and the estimate says why (`Correction.basis`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from advisor.contract import Candidate, CorrectionBasis
from advisor.engine.costmodel import step_cost
from advisor.engine.profile import DeviceProfile

CLIP = 3.0  # the corrected figure stays within 1/3 and 3 times the profiled one
MIN_ROWS = 8  # fewer measurements teach nothing a profile does not already say
MIN_NETWORKS = 3  # the cross-validated error leaves networks out: it needs others to learn from
MAX_FOLDS = 8  # networks grouped into at most this many folds, so a refit stays a few seconds


class Validation(TypedDict):
    """How the correction did against the profile alone on the device's reliable rows, networks left out."""

    rows: int
    networks: int
    median_error: float  # the correction's median |relative error|, cross-validated
    p90_error: float
    profile_median_error: float  # the profile's own on the same rows
    profile_p90_error: float
    # the 5th and 95th percentiles of measured / cross-validated prediction: its 90% interval (intervals.py)
    ratio_low: float
    ratio_high: float
    used: bool  # median_error < profile_median_error


@dataclass(frozen=True)
class Correction:
    """A fitted correction with its validation; the engine calls `seconds` where it is `used`."""

    model: Any
    expected_error: float
    validation: Validation

    @property
    def used(self) -> bool:
        return self.validation["used"]

    def seconds(self, candidate: Candidate, batch: int, threads: int, profile: DeviceProfile) -> float:
        return predict(self.model, [features(candidate, batch, threads, profile)])[0]

    def basis(self) -> CorrectionBasis:
        v = self.validation
        measured = f"on {v['rows']} reliable measurements of {v['networks']} networks, each network left out"
        errors = f"median error {v['median_error']:.0%} against the profile's {v['profile_median_error']:.0%}"
        text = (
            f"The learned correction times this: {measured}, its {errors}."
            if v["used"]
            else f"The profile times this, not the learned correction: {measured}, the correction's {errors}."
        )
        return {
            "used": v["used"],
            "text": text,
            "rows": v["rows"],
            "networks": v["networks"],
            "median_error": v["median_error"],
            "profile_median_error": v["profile_median_error"],
        }


def features(candidate: Candidate, batch: int, threads: int, profile: DeviceProfile) -> list[float]:
    """What the regressor sees. No family: the cost model already walks each family's real step, and with
    two networks a family, a family's indicator learned the other network's residual: leaving each network
    out of three quiet runs, the median error was 16.6% with the indicators and 13.7% without them
    (bench/results/predict_amd-epyc-2c_quiet/README.md)."""
    cost = step_cost(candidate, batch_size=batch, threads=threads, profile=profile)
    work = candidate["flops_per_example"] * batch
    return [
        math.log(cost.seconds),
        cost.compute / cost.seconds,
        math.log2(batch),
        float(threads),
        math.log10(work + 1),
        math.log10(candidate["parameters"] + 1),
        math.log10(candidate["activations_per_example"] * batch + 1),
    ]


FEATURES = 7  # len(features(...)): a stored regressor fitted on another count is stale (timemodels.py)


def rows_features(configs: Sequence[tuple[Candidate, int, int]], profile: DeviceProfile) -> list[list[float]]:
    return [features(c, b, t, profile) for c, b, t in configs]


def _regressor() -> Any:
    """Gradient boosting on the log of measured / profiled (TransformedTargetRegressor takes the log of the
    ratio it is given and returns the ratio)."""
    import numpy as np
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.ensemble import GradientBoostingRegressor

    boosting = GradientBoostingRegressor(
        n_estimators=150, max_depth=3, learning_rate=0.05, subsample=0.8, random_state=0
    )
    return TransformedTargetRegressor(
        regressor=boosting, func=np.log, inverse_func=np.exp, check_inverse=False
    )


def _ratios(x: list[list[float]], measured: Sequence[float]) -> list[float]:
    """measured / profiled per row (x[i][0] is the log of the profiled seconds)."""
    return [m / math.exp(row[0]) for row, m in zip(x, measured, strict=True)]


def _corrected(x: list[list[float]], ratios: Sequence[float]) -> list[float]:
    return [math.exp(row[0]) * min(CLIP, max(1.0 / CLIP, float(r))) for row, r in zip(x, ratios, strict=True)]


def fit(x: list[list[float]], measured: list[float]) -> Any:
    """A regressor of the ratio measured / profiled, learned in logs."""
    model = _regressor()
    model.fit(x, _ratios(x, measured))
    return model


def predict(model: Any, x: list[list[float]]) -> list[float]:
    return _corrected(x, [float(r) for r in model.predict(x)])


def cross_predict(
    x: list[list[float]], measured: list[float], groups: Sequence[Hashable], *, max_folds: int | None = None
) -> list[float]:
    """Each row's corrected prediction by a correction fitted on the other groups' rows only (a group: a
    network, to leave it out; a configuration measured in several runs, to leave all its runs out), with
    scikit-learn's GroupKFold and cross_val_predict (at most `max_folds` folds)."""
    from sklearn.model_selection import GroupKFold, cross_val_predict

    codes = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    folds = min(len(codes), max_folds or len(codes))
    ratios = cross_val_predict(
        _regressor(), x, _ratios(x, measured), groups=[codes[g] for g in groups], cv=GroupKFold(folds)
    )
    return _corrected(x, [float(r) for r in ratios])


def cross_validate(
    rows: list[dict[str, Any]], x: list[list[float]], *, same_network: bool = True, max_folds: int = MAX_FOLDS
) -> dict[str, list[float]]:
    """Relative errors of the corrected prediction, in the rows' order: leaving each network out of the
    training rows, and leaving out one row at a time (that network at an unmeasured batch or thread count)."""
    measured = [float(r["measured"]) for r in rows]

    def errors(predicted: list[float]) -> list[float]:
        return [(p - m) / m for p, m in zip(predicted, measured, strict=True)]

    networks = [r["network"] for r in rows]
    return {
        "leave_network_out": errors(cross_predict(x, measured, networks, max_folds=max_folds)),
        "same_network": errors(cross_predict(x, measured, list(range(len(rows))))) if same_network else [],
    }


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of `values`, linear between order statistics (numpy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _p90(errors: Sequence[float]) -> float:
    ordered = sorted(abs(e) for e in errors)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def validate(
    x: list[list[float]], measured: list[float], groups: Sequence[Hashable], *, max_folds: int = MAX_FOLDS
) -> Validation:
    """The correction cross-validated with the groups (networks) left out, against the profile alone on the
    same rows: it is `used` only where its median error is lower."""
    predicted = cross_predict(x, measured, groups, max_folds=max_folds)
    corrected = [(p - m) / m for p, m in zip(predicted, measured, strict=True)]
    profiled = [(math.exp(row[0]) - m) / m for row, m in zip(x, measured, strict=True)]
    ratios = [m / p for m, p in zip(measured, predicted, strict=True)]
    median, profile_median = (
        statistics.median(abs(e) for e in corrected),
        statistics.median(abs(e) for e in profiled),
    )
    return {
        "rows": len(measured),
        "networks": len(set(groups)),
        "median_error": median,
        "p90_error": _p90(corrected),
        "profile_median_error": profile_median,
        "profile_p90_error": _p90(profiled),
        "ratio_low": quantile(ratios, 0.05),
        "ratio_high": quantile(ratios, 0.95),
        "used": median < profile_median,
    }


def fit_correction(
    configs: Sequence[tuple[str, Candidate, int, int, float]], profile: DeviceProfile
) -> Correction | None:
    """From (network key, candidate, batch, threads, measured seconds) rows (reliable ones: the caller leaves
    unreliable measurements out): the correction fitted on all of them with its validation against the
    profile alone; None while there are too few rows or networks to cross-validate it."""
    if len(configs) < MIN_ROWS or len({c[0] for c in configs}) < MIN_NETWORKS:
        return None
    x = rows_features([(c, b, t) for _, c, b, t, _ in configs], profile)
    measured = [m for *_, m in configs]
    validation = validate(x, measured, [key for key, *_ in configs])
    return Correction(fit(x, measured), validation["p90_error"], validation)
