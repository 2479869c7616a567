"""Fair share with a real worker process: three users on one device, user A's ten calibrations queued
first (under a per-user limit that allows them), then B's and C's one each: B's first job starts after at
most one of A's, and so does C's (issue 29's target). The worker claims by the rule whatever message it
handles (advisor/dispatch.py)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor import services
from advisor.models import CalibrationJob
from tests.conftest import TABULAR_SPEC, WorkerProcess, submit_to_worker, wait_for

pytestmark = [pytest.mark.slow]

FAST = {
    "batch_sizes": [16],
    "threads": [1],
    "options": {"min_seconds": 0.05, "min_iterations": 2, "warmup": 1},
}


def test_another_users_first_job_waits_behind_one_of_a_backlog(
    worker: WorkerProcess, user: Any, other_user: Any, django_user_model: Any, settings: Any
) -> None:
    settings.JOBS_QUEUED_PER_USER = 10
    third = django_user_model.objects.create_user(username="cy", password="x" * 12)
    a_jobs = [submit_to_worker(worker, user, TABULAR_SPEC, **FAST) for _ in range(10)]
    b_job = submit_to_worker(worker, other_user, TABULAR_SPEC, **FAST)
    c_job = submit_to_worker(worker, third, TABULAR_SPEC, **FAST)
    try:
        for job in (b_job, c_job):
            wait_for(
                lambda job=job: CalibrationJob.objects.get(pk=job.pk).started_at,
                timeout=180,
                what=f"job {job.pk} to start\n{worker.log()}",
            )
    finally:
        for job in a_jobs:  # the rest of A's backlog is not needed: stop it
            job.refresh_from_db()
            if not job.finished:
                services.cancel_calibration(job=job)
    starts = {j.pk: j.started_at for j in CalibrationJob.objects.filter(pk__in=[j.pk for j in a_jobs])}
    for job in (b_job, c_job):
        job.refresh_from_db()
        before = [pk for pk, at in starts.items() if at is not None and at < job.started_at]
        assert len(before) <= 1, (job.pk, before, worker.log())
    b_job.refresh_from_db()
    assert b_job.status == "succeeded", (b_job.error, worker.log())
