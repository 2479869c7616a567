"""Celery tasks: thin. Each takes a primary key and calls one service."""

from __future__ import annotations

from celery import shared_task

from advisor import dispatch, profiling, timemodels
from advisor.models import Device


@shared_task(name="advisor.run_calibration", acks_late=True, reject_on_worker_lost=True)
def run_calibration(job_id: int) -> str:
    # the device's next job by fair share, of any kind: perhaps not this one (advisor/dispatch.py)
    return dispatch.run_next("calibration", job_id)


@shared_task(name="advisor.refit_time_model")
def refit_time_model(device_id: str) -> int | None:
    device = Device.objects.filter(pk=device_id).first()
    model = timemodels.refit_time_model(device=device) if device is not None else None
    return model.version if model is not None else None


@shared_task(name="advisor.refresh_profile")
def refresh_profile(device_id: str) -> bool | None:
    """Profile an idle device again (advisor/workers.py sends it to the device's own queue): whether the new
    profile is trusted; None where a job came first or profiling failed."""
    device = Device.objects.filter(pk=device_id).first()
    done = profiling.refresh_profile(device=device) if device is not None else None
    if done is None or not done.profile_history:
        return None
    return not done.profile_history[-1].get("unreliable_reasons")
