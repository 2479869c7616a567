"""Celery tasks: thin. Each takes a primary key and calls one service."""

from __future__ import annotations

from celery import shared_task

from advisor import running


@shared_task(name="advisor.run_calibration", acks_late=True, reject_on_worker_lost=True)
def run_calibration(job_id: int) -> str:
    return running.run_calibration_job(job_id=job_id)
