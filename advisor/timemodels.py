"""A device's learned time model: refitted on its calibrations' measurements after each finished one (a write,
the Celery task's), and the correction its estimates read (advisor/advice.py)."""

from __future__ import annotations

import hashlib
import json
import pickle
from typing import cast

from advisor.engine.learned import FEATURES, Correction, Validation, fit_correction
from advisor.models import CalibrationJob, Device, MeasuredConfiguration, TimeModel


def refit_time_model(*, device: Device) -> TimeModel | None:
    """Fit the device's learned correction on every reliable successful measurement on it (the Celery task
    after each finished calibration); a new version with its cross-validated error and whether it beat the
    profile alone on those rows (engine.learned.Validation), or None while too few rows."""
    if not device.profile:
        return None
    measured = MeasuredConfiguration.objects.filter(
        job__device=device, job__status=CalibrationJob.SUCCEEDED, status="ok", seconds_per_batch__gt=0
    ).select_related("job__recommendation")
    configs = []
    for m in measured:
        if (m.result or {}).get("unreliable"):  # contended or imprecise: nothing to learn from
            continue
        candidate = m.job.recommendation.result["candidates"][m.job.candidate]
        key = hashlib.sha1(json.dumps(candidate["networks"], sort_keys=True).encode()).hexdigest()
        configs.append((key, candidate, m.batch_size, m.threads or 1, float(m.seconds_per_batch or 0)))
    correction = fit_correction(configs, device.profile)
    if correction is None:
        return None
    last = device.time_models.order_by("-version").first()
    return TimeModel.objects.create(
        device=device,
        version=(last.version + 1) if last else 1,
        rows=len(configs),
        networks=len({c[0] for c in configs}),
        expected_error=correction.validation["p90_error"],
        median_error=correction.validation["median_error"],
        validation=dict(correction.validation),
        fitted=pickle.dumps(correction.model),
    )


def correction_for(device: Device) -> Correction | None:
    """The device's latest learned correction, with its validation (used or not: the estimate says which
    timed it and why), if one was fitted on today's features and validated against the profile."""
    latest = device.time_models.order_by("-version").first()
    if latest is None or "used" not in (latest.validation or {}):
        return None  # none, or fitted before the gate: the next finished calibration refits it
    # our own rows, written by refit_time_model: not data from a user
    model = pickle.loads(bytes(latest.fitted))
    if getattr(model, "n_features_in_", FEATURES) != FEATURES:
        return None  # fitted on an older feature set: the next finished calibration refits it
    return Correction(model, latest.expected_error, cast(Validation, latest.validation))
