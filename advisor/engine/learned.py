"""The learned correction: a regressor of log(measured / profiled seconds per batch) from what the cost model
knows about a configuration (scikit-learn, imported only when fitting or predicting, so the engine's import
stays cheap). Rows come from every measurement on a profiled device; the prediction is the profiled figure
times exp(predicted log ratio), clipped to a factor of CLIP either way, as NeuSight bounds its learned
utilisation by the roofline: the correction may sharpen the profile's figure, never replace it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from advisor.engine.costmodel import step_cost
from advisor.engine.profile import DeviceProfile

FAMILIES = ("ffn", "ae", "rbm", "dbn", "cnn", "gan", "vae", "dn", "rnn", "lstm")
CLIP = math.log(3.0)


def features(candidate: dict[str, Any], batch: int, threads: int, profile: DeviceProfile) -> list[float]:
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
        *(1.0 if candidate["family"] == f else 0.0 for f in FAMILIES),
    ]


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


def cross_validate(rows: list[dict[str, Any]], x: list[list[float]]) -> dict[str, list[float]]:
    """Relative errors of the corrected prediction: leaving each network out of the training rows, and
    leaving out one row of a network at a time (that network at an unmeasured batch or thread count)."""
    measured = [float(r["measured"]) for r in rows]
    names = [r["network"] for r in rows]
    out: dict[str, list[float]] = {"leave_network_out": [], "same_network": []}
    for name in dict.fromkeys(names):
        train = [i for i, n in enumerate(names) if n != name]
        test = [i for i, n in enumerate(names) if n == name]
        model = fit([x[i] for i in train], [measured[i] for i in train])
        for i, p in zip(test, predict(model, [x[i] for i in test]), strict=True):
            out["leave_network_out"].append((p - measured[i]) / measured[i])
    for i in range(len(rows)):
        train = [j for j in range(len(rows)) if j != i]
        model = fit([x[j] for j in train], [measured[j] for j in train])
        p = predict(model, [x[i]])[0]
        out["same_network"].append((p - measured[i]) / measured[i])
    return out
