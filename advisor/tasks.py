"""Celery tasks: thin. Each takes a primary key and calls one service."""

from __future__ import annotations

from celery import shared_task

from advisor import dispatch, profiles
from advisor.models import Device


@shared_task(name="advisor.run_calibration", acks_late=True, reject_on_worker_lost=True)
def run_calibration(job_id: int) -> str:
    # the device's next job by fair share, of any kind: perhaps not this one (advisor/dispatch.py)
    return dispatch.run_next("calibration", job_id)


@shared_task(name="advisor.refit_time_model")
def refit_time_model(device_id: str) -> int | None:
    device = Device.objects.filter(pk=device_id).first()
    model = profiles.refit_time_model(device=device) if device is not None else None
    return model.version if model is not None else None
