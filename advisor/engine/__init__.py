"""The rules engine: pure Python (no Django, no torch). See docs/CONTRACT.md.

recommend(spec) -> Recommendation (without id)      normalise(spec) -> validated spec, defaults filled
SpecError(.errors: {dotted.path: [messages]})         gpu_catalog() -> [GPU dicts]
rules() / RULES -> [{id, text, source, when, then}]   memory_for(candidate, batch_size=) -> memory_bytes
resident_for(candidate, batch_size=) -> CPU resident-set growth in bytes (simulated heap)
estimate_for(rec, i, batch_size=) -> the estimate (catalog, profiled, predicted) at another batch size
measured_estimate(rec, i, seconds_per_batch=, batch_size=) -> estimate with basis "measured"
follow_measurement(recommendation, measured_estimate) -> the recommendation with the plan's threads and
    the first candidate's batch that a calibration measured best
largest_batch(candidate, examples) -> the largest batch chosen from a device profile (<= batch.start)
with_measured_scaling(rec, i, estimate, calibrations) -> the estimate over several devices, measured scaling
data_parallel_devices(plan) -> the devices a plan's time is divided over (1 unless data parallel)
with_interval(estimate, device) -> the estimate with its 90% interval (kept, or from its basis: stored before)
ENGINE_VERSION: the engine's version, bumped when a rule changes (version.py); stored with each recommendation
"""

from __future__ import annotations

from advisor.engine.batching import largest_batch
from advisor.engine.catalog import cpu_catalog, gpu_catalog, link_catalog, storage_catalog
from advisor.engine.errors import SpecError
from advisor.engine.intervals import with_interval
from advisor.engine.measured import estimate_for, measured_estimate, with_measured_scaling
from advisor.engine.memory import memory_for, resident_for
from advisor.engine.plan import follow_measurement
from advisor.engine.recommend import data_parallel_devices, recommend
from advisor.engine.rules import RULES, rules
from advisor.engine.spec import normalise
from advisor.engine.version import ENGINE_VERSION

__all__ = [
    "ENGINE_VERSION",
    "RULES",
    "SpecError",
    "cpu_catalog",
    "data_parallel_devices",
    "estimate_for",
    "follow_measurement",
    "gpu_catalog",
    "largest_batch",
    "link_catalog",
    "measured_estimate",
    "memory_for",
    "normalise",
    "recommend",
    "resident_for",
    "rules",
    "storage_catalog",
    "with_interval",
    "with_measured_scaling",
]
