"""Celery tasks of the probe: thin. The worker consumes the device queues; probe jobs share them with
calibrations, so a device runs one job of either kind at a time."""

from __future__ import annotations

from celery import shared_task

from advisor.probe import running


@shared_task(name="advisor.run_probe", acks_late=True, reject_on_worker_lost=True)
def run_probe(job_id: int) -> str:
    return running.run_probe_job(job_id=job_id)
