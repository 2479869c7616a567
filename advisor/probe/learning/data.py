"""The split and the baseline under the name bench and the scripts beside it call them by (`data.split`,
`data.baseline`, `data.Split`...). The probe's own code imports them from their steps' modules: split.py
(step 2) and baseline.py (step 3); see pipeline.py."""

from __future__ import annotations

from advisor.probe.learning.baseline import baseline
from advisor.probe.learning.split import (
    GOALS,
    METRICS,
    MIN_EXAMPLES,
    MIN_PER_CLASS,
    TEST_SHARE,
    VALIDATION_SHARE,
    Split,
    Unsupported,
    check_fit,
    repeats_for,
    score,
    split,
    spread,
    subsample,
    trainable,
)

__all__ = [
    "GOALS",
    "METRICS",
    "MIN_EXAMPLES",
    "MIN_PER_CLASS",
    "TEST_SHARE",
    "VALIDATION_SHARE",
    "Split",
    "Unsupported",
    "baseline",
    "check_fit",
    "repeats_for",
    "score",
    "split",
    "spread",
    "subsample",
    "trainable",
]
