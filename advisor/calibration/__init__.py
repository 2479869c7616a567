"""PyTorch calibration: build a recommended network, time real training steps, sweep configurations.

Imports torch, never Django. Entry points (the bench, the worker's Celery task and notebooks share them):

  build(candidate) -> {network key: nn.Module}         layers.py (RBM, Reshape, LastStep, Residual, Concat)
  make_step(candidate, device) -> TrainingStep          steps.py: the family's real step and synthetic data
  measure(candidate, *, device, batch_size, threads, min_iterations, min_seconds, warmup) -> dict
                                                        measure.py: one configuration, per the contract
  run_job(JobPlan(...), on_event=..., should_cancel=...) -> summary
                                                        runner.py: a sweep in spawned child processes
  run_scaling(ScalingPlan(candidate, world_sizes=[1, 2], ...)) -> {status, error, rows}
                                                        scaling.py + distributed.py: DDP ranks per world size
  sweep_summary(results, plan=) -> SweepSummary         summary.py: fastest, scalings, the plan judged
  detect_devices() -> [{"kind": "cpu" | "cuda", ...}]   devices.py
  local_device("cpu" | "cuda:N") -> (tag, [entry])     devices.py: the commands' --device
  predicted_epoch_seconds / train_one_epoch             epoch.py: from a step to an epoch, and a real epoch
"""

from __future__ import annotations

from advisor.calibration.devices import detect_devices, local_device
from advisor.calibration.epoch import predicted_epoch_seconds, train_one_epoch
from advisor.calibration.layers import build
from advisor.calibration.measure import measure
from advisor.calibration.runner import JobPlan, PlanError, run_job
from advisor.calibration.scaling import ScalingPlan, run_scaling
from advisor.calibration.steps import make_step
from advisor.calibration.summary import sweep_summary

__all__ = [
    "JobPlan",
    "PlanError",
    "ScalingPlan",
    "build",
    "detect_devices",
    "local_device",
    "make_step",
    "measure",
    "predicted_epoch_seconds",
    "run_job",
    "run_scaling",
    "sweep_summary",
    "train_one_epoch",
]
