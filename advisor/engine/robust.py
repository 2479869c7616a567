"""Statistics of a measured configuration's step times (pure Python: the calibration harness, the worker's
headline and the bench share them).

- `median_interval`: a distribution-free confidence interval of the median from order statistics (the
  sample's k-th smallest and k-th largest values, k from the binomial distribution of how many samples fall
  below the true median), which `measure()`'s stopping rule narrows until it is within ±PRECISION of the
  median. No assumption about the shape: step times are skewed, with stalls far out on the right.
- `step_statistics`: the candidates for the headline's seconds per step, side by side in `bench epoch`;
  `HEADLINE_STATISTIC` names the one it chose.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

CONFIDENCE = 0.90  # of the median's interval: five steps can give one ([min, max]); 95% needs six
PRECISION = 0.05  # the interval's half-width relative to the median below which timing stops
EXACT_UP_TO = 1000  # samples; beyond, the binomial's normal approximation (exact sums grow slow)
TRIM = 0.10  # the trimmed mean drops this share of the samples at each end


def _lower_rank(n: int, confidence: float) -> int:
    """The largest k (1-based) such that [x_(k), x_(n+1-k)] covers the median with at least `confidence`:
    the interval misses when fewer than k samples, or fewer than k on the other side, fall below the median,
    2 * P(Binomial(n, 1/2) <= k - 1) <= 1 - confidence. 0 where even [min, max] is not enough."""
    alpha = 1.0 - confidence
    if n > EXACT_UP_TO:
        z = statistics.NormalDist().inv_cdf(1.0 - alpha / 2.0)
        return max(0, math.floor(n / 2.0 - z * math.sqrt(n) / 2.0))
    total, below, k = 2**n, 0, 0
    while k < n:
        below += math.comb(n, k)  # P(B <= k) * 2**n
        if 2 * below > alpha * total:
            break
        k += 1
    return k


def median_interval(samples: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The order-statistic confidence interval of the median, or None where there are too few samples."""
    n = len(samples)
    k = _lower_rank(n, confidence)
    if k < 1:
        return None
    ordered = sorted(samples)
    return ordered[k - 1], ordered[n - k]


def relative_halfwidth(samples: Sequence[float], confidence: float = CONFIDENCE) -> float:
    """Half the median's interval over the median; infinite where no interval exists yet."""
    interval = median_interval(samples, confidence)
    median = statistics.median(samples) if samples else 0.0
    if interval is None or median <= 0:
        return math.inf
    return (interval[1] - interval[0]) / 2.0 / median


def trimmed_mean(samples: Sequence[float], share: float = TRIM) -> float:
    """The mean of the samples less `share` of them at each end (none dropped from fewer than 1/share)."""
    ordered = sorted(samples)
    cut = int(len(ordered) * share)
    kept = ordered[cut : len(ordered) - cut] or ordered
    return statistics.fmean(kept)


def winsorised_mean(samples: Sequence[float], share: float = TRIM) -> float:
    """The mean with `share` of the samples at each end set to the nearest kept value."""
    ordered = sorted(samples)
    cut = int(len(ordered) * share)
    if cut == 0:
        return statistics.fmean(ordered)
    low, high = ordered[cut], ordered[len(ordered) - cut - 1]
    return statistics.fmean(min(max(x, low), high) for x in ordered)


def step_statistics(samples: Sequence[float]) -> dict[str, float]:
    """Every candidate for the headline's seconds per step, from one configuration's step times."""
    return {
        "median": statistics.median(samples),
        "mean": statistics.fmean(samples),
        "trimmed_mean": trimmed_mean(samples),
        "winsorised_mean": winsorised_mean(samples),
    }


# The statistic of a configuration's steps that predicts a real epoch (with gathering added), chosen by
# `python -m bench epoch` against real epochs, quietly and under a competing load
# (bench/results/epoch_amd-epyc-2c_statistics): measure()'s `<name>_seconds_per_batch`.
HEADLINE_STATISTIC = "trimmed_mean"


def headline_step(result: Mapping[str, Any], median: float | None = None) -> tuple[float, str]:
    """The seconds per batch that predict a real epoch from a measured configuration (measure()'s dict),
    and what they are: HEADLINE_STATISTIC plus gathering each shuffled batch from the data set where the
    calibration timed it; results measured before it was reported fall back to the mean step, then the
    median (`median`: a stored row's seconds_per_batch), and say so."""
    for name in (HEADLINE_STATISTIC, "mean"):
        value = result.get(f"{name}_seconds_per_batch")
        if value:
            step, source = float(value), name.replace("_", " ")
            break
    else:
        step, source = float(median or result.get("seconds_per_batch") or 0.0), "median"
    gather = result.get("gather_seconds_per_batch")
    if gather is not None:
        return step + float(gather), f"{source} + gathering"
    return step, source
