"""The probe's learning side: torch and scikit-learn, never Django.

pipeline.py reads as the probe's plan: sample -> split -> baseline -> train -> score -> curve -> verdict (->
next step), one module a step: samples (the canonical Sample, demo data), split (the three-way split,
scaling, the repeated splits), baseline (the tuned classical baseline; the generation probe's Gaussian
mixture), train (one candidate for a bounded time, the roles in turn, the generator; imports torch), score
(the repeats' median and spread; a generator's two-sample score), curve (the learning curve and its fit),
verdict (and reach: the time to the target), nextstep (what to try after a missed target). Beside them:
clock (the probe's time and its events), plan (ProbePlan), child (run_in_child: a spawned process with a
hard stop), uploads (parsing CSV/NPZ/NPY/ZIP), generation (the two-sample score and a generator's training,
shared with bench advice), stopping (the early-stopping rule), data (split and baseline under the names
bench calls them by). Importing this package does not import torch, so the web process stays light.
"""

from __future__ import annotations

from advisor.probe.learning.plan import ProbePlan
from advisor.probe.learning.samples import DEMOS, Limits, Sample, SampleError
from advisor.probe.learning.uploads import parse_upload

__all__ = ["DEMOS", "Limits", "ProbePlan", "Sample", "SampleError", "parse_upload"]
