"""The probe's learning side: torch and scikit-learn, never Django.

samples (the canonical Sample, demo data), uploads (parsing CSV/NPZ/NPY/ZIP), data (split, scaling, the tuned
baseline, repeated splits), train (one candidate for a bounded time; imports torch), curve (the learning-curve
fit), verdict, nextstep (what to try after a missed target), probe (shallow_first), generation (the
two-sample score, a generator's training and the generation probe; torch imported inside), plan (ProbePlan),
child (run_in_child: a spawned process with a hard stop). Importing this package does not import torch, so
the web process stays light.
"""

from __future__ import annotations

from advisor.probe.learning.plan import ProbePlan
from advisor.probe.learning.samples import DEMOS, Limits, Sample, SampleError
from advisor.probe.learning.uploads import parse_upload

__all__ = ["DEMOS", "Limits", "ProbePlan", "Sample", "SampleError", "parse_upload"]
