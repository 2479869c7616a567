"""Celery tasks of the probe: thin. The worker consumes the device queues; probe jobs share them with
calibrations, so a device runs one job of either kind at a time, in fair-share order."""

from __future__ import annotations

from celery import shared_task

from advisor import dispatch


@shared_task(name="advisor.run_probe", acks_late=True, reject_on_worker_lost=True)
def run_probe(job_id: int) -> str:
    # the device's next job by fair share, of any kind: perhaps not this one (advisor/dispatch.py)
    return dispatch.run_next("probe", job_id)
