"""PyTorch calibration: build a recommended network, time real training steps, sweep configurations.

Imports torch, never Django. Public entry points: build, measure, run_job/JobPlan, sweep_summary,
detect_devices.
"""

from __future__ import annotations

from advisor.calibration.devices import detect_devices
from advisor.calibration.layers import build
from advisor.calibration.measure import measure
from advisor.calibration.runner import JobPlan, PlanError, run_job
from advisor.calibration.steps import make_step
from advisor.calibration.summary import sweep_summary

__all__ = [
    "JobPlan",
    "PlanError",
    "build",
    "detect_devices",
    "make_step",
    "measure",
    "run_job",
    "sweep_summary",
]
