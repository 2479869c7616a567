"""The learned correction: a regressor of log(measured / profiled seconds per batch) from what the cost model
knows about a configuration (scikit-learn, imported only when fitting or predicting, so the engine's import
stays cheap). Rows come from every measurement on a profiled device; the prediction is the profiled figure
times exp(predicted log ratio), clipped to a factor of CLIP either way, as NeuSight bounds its learned
utilisation by the roofline: the correction may sharpen the profile's figure, never replace it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from advisor.engine.costmodel import step_cost
from advisor.engine.profile import DeviceProfile

CLIP = math.log(3.0)
MIN_ROWS = 8  # fewer measurements teach nothing a profile does not already say
MIN_NETWORKS = 3  # the cross-validated error leaves one out: it needs others to learn from
MAX_FOLDS = 8  # networks grouped into at most this many folds, so a refit stays a few seconds


@dataclass(frozen=True)
class Correction:
    """A fitted correction with the error its cross-validation supports; the engine calls `seconds`."""

    model: Any
    expected_error: float

    def seconds(self, candidate: dict[str, Any], batch: int, threads: int, profile: DeviceProfile) -> float:
        return predict(self.model, [features(candidate, batch, threads, profile)])[0]


def features(candidate: dict[str, Any], batch: int, threads: int, profile: DeviceProfile) -> list[float]:
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


FEATURES = 7  # len(features(...)): a stored regressor fitted on another count is stale (profiles.py)


def rows_features(
    configs: Sequence[tuple[dict[str, Any], int, int]], profile: DeviceProfile
) -> list[list[float]]:
    return [features(c, b, t, profile) for c, b, t in configs]


def _regressor() -> Any:
    from sklearn.ensemble import GradientBoostingRegressor

    return GradientBoostingRegressor(
        n_estimators=150, max_depth=3, learning_rate=0.05, subsample=0.8, random_state=0
    )


def fit(x: list[list[float]], measured: list[float]) -> Any:
    """A regressor of the log ratio measured / profiled (x[i][0] is the log of the profiled seconds)."""
    y = [math.log(m) - row[0] for row, m in zip(x, measured, strict=True)]
    model = _regressor()
    model.fit(x, y)
    return model


def predict(model: Any, x: list[list[float]]) -> list[float]:
    ratios = model.predict(x)
    return [math.exp(row[0] + max(-CLIP, min(CLIP, float(r)))) for row, r in zip(x, ratios, strict=True)]


def cross_predict(
    x: list[list[float]], measured: list[float], groups: Sequence[object], *, max_folds: int | None = None
) -> list[float]:
    """Each row's corrected prediction by a correction fitted on the other groups' rows only (a group: a
    network, to leave it out; a configuration measured in several runs, to leave all its runs out)."""
    distinct = list(dict.fromkeys(groups))
    folds = min(len(distinct), max_folds or len(distinct))
    out = [0.0] * len(x)
    for fold in range(folds):
        left_out = set(distinct[fold::folds])
        train = [i for i, g in enumerate(groups) if g not in left_out]
        test = [i for i, g in enumerate(groups) if g in left_out]
        model = fit([x[i] for i in train], [measured[i] for i in train])
        for i, p in zip(test, predict(model, [x[i] for i in test]), strict=True):
            out[i] = p
    return out


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


def fit_correction(
    configs: Sequence[tuple[str, dict[str, Any], int, int, float]], profile: DeviceProfile
) -> tuple[Correction, dict[str, float]] | None:
    """From (network key, candidate, batch, threads, measured seconds) rows: the correction fitted on all of
    them and its leave-networks-out error ({"p90", "median"}); None while there are too few rows."""
    if len(configs) < MIN_ROWS or len({c[0] for c in configs}) < MIN_NETWORKS:
        return None
    x = rows_features([(c, b, t) for _, c, b, t, _ in configs], profile)
    rows = [{"network": key, "measured": m} for key, _, _, _, m in configs]
    errors = sorted(abs(e) for e in cross_validate(rows, x, same_network=False)["leave_network_out"])
    p90 = errors[max(0, math.ceil(0.9 * len(errors)) - 1)]
    model = fit(x, [m for *_, m in configs])
    return Correction(model, p90), {"p90": p90, "median": statistics.median(errors)}
