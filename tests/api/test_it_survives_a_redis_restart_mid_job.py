"""Redis stopped and started again (empty, as after a crash) while a real worker runs a calibration: the job
finishes and nothing is lost; the worker reconnects by itself, and the next job submitted runs on it. A
private redis-server the test owns (never the shared one)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from advisor import services
from advisor.models import CalibrationJob, Device
from tests.api.conftest import RedisServer
from tests.conftest import WorkerProcess, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.postgres_redis, pytest.mark.django_db(transaction=True)]


def _submit(user: Any, rec: Any, device: Device, sizes: list[int]) -> CalibrationJob:
    job, _ = services.submit_calibration(
        owner=user, recommendation=rec, candidate=0, device=device, batch_sizes=sizes, threads=[1],
        options={"min_seconds": 1.0},
    )  # fmt: skip
    return job


def _finished(pk: int, worker: WorkerProcess, timeout: float) -> CalibrationJob:
    return wait_for(
        lambda: (j := CalibrationJob.objects.get(pk=pk)).finished and j,
        timeout=timeout,
        what=f"job {pk} to finish\n{worker.log()[-3000:]}",
    )


def test_a_running_job_finishes_and_the_worker_reconnects(
    redis_broker: RedisServer, user: Any, tabular_spec: Any, tmp_path: Path
) -> None:
    worker = WorkerProcess(tmp_path)  # started after redis_broker: its environment names the private Redis
    worker.start()
    try:
        device = Device.objects.get(id=worker.device_id)
        rec = services.advise(owner=user, spec=tabular_spec)
        job = _submit(user, rec, device, [16, 32, 64, 128])
        wait_for(
            lambda: CalibrationJob.objects.get(pk=job.pk).status == "running", timeout=60, what="running"
        )

        redis_broker.stop()
        time.sleep(2)
        redis_broker.start()  # the same port, empty

        first = _finished(job.pk, worker, timeout=120)
        assert first.status == "succeeded", (first.error, worker.log()[-3000:])
        assert first.measurements.filter(status="ok").count() == 4

        second = _submit(user, rec, device, [16])
        done = _finished(second.pk, worker, timeout=120)
        assert done.status == "succeeded", (done.error, worker.log()[-3000:])
        assert worker.proc is not None and worker.proc.poll() is None, "the same worker, reconnected"
    finally:
        worker.stop()
