"""The whole pipeline through a real `celery worker` process: the embedded default (SQLite + file-system
broker) in the main run, and PostgreSQL + Redis when `make test` runs the postgres_redis marker with
their URLs."""

from __future__ import annotations

from typing import Any

import psutil
import pytest

from advisor.models import CalibrationJob
from tests.conftest import WorkerProcess, submit_to_worker, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.postgres_redis]


def _job(api: Any, pk: int) -> dict[str, Any]:
    response = api.get(f"/api/v1/calibrations/{pk}/")
    assert response.status_code == 200
    return response.json()


def test_it_recommends_calibrates_and_reports_measured_time(
    api: Any, worker: WorkerProcess, tabular_spec: Any
) -> None:
    rec = api.post("/api/v1/recommendations/", tabular_spec, format="json")
    assert rec.status_code == 201, rec.content
    devices = api.get("/api/v1/devices/").json()
    mine = [d for d in devices if d["id"] == worker.device_id]
    assert mine and mine[0]["online"] and mine[0]["kind"] == "cpu" and mine[0]["cores"] >= 1

    submitted = api.post(
        "/api/v1/calibrations/",
        {
            "recommendation": rec.json()["id"],
            "candidate": 0,
            "device": worker.device_id,
            "batch_sizes": [32],
            "threads": [1],
        },
        format="json",
    )
    assert submitted.status_code == 202, submitted.content
    job_id = submitted.json()["id"]
    seen_progress: set[float] = set()

    def finished() -> dict[str, Any] | None:
        job = _job(api, job_id)
        seen_progress.add(job["progress"])
        return job if job["status"] in {"succeeded", "failed", "cancelled"} else None

    job = wait_for(finished, timeout=90, what=f"calibration {job_id} to finish\n{worker.log()}")
    assert job["status"] == "succeeded", (job["error"], worker.log())
    (row,) = job["results"]
    assert row["batch_size"] == 32 and row["threads"] == 1 and row["device"] == "cpu"
    assert row["seconds_per_batch"] > 0 and row["iterations"] >= 5
    assert row["stopped"] in {"precise", "time"} and row["contention"]["samples"] >= 2
    shown = api.get(f"/api/v1/recommendations/{rec.json()['id']}/").json()
    first = shown["candidates"][0]["estimate"]
    if row["unreliable"]:  # the machine was busy: the row says why, and no measured time is published
        assert row["unreliable_reasons"] and job["estimate"] is None
        assert job["summary"]["withheld"].startswith("No measured time")
        assert first["basis"] != "measured" and "interval" in first
        return
    assert job["estimate"]["basis"] == "measured"
    assert first["basis"] == "measured"
    # the figure that predicts a real epoch: the trimmed mean step (one stall does not move it), plus
    # gathering each shuffled batch from the data set (bench epoch)
    assert first["measured_at"]["step"] == "trimmed mean + gathering"
    assert row["gather_seconds_per_batch"] > 0
    assert first["seconds_per_batch"] == pytest.approx(
        row["trimmed_mean_seconds_per_batch"] + row["gather_seconds_per_batch"]
    )
    low, high = first["interval"]["seconds_to_train"]
    assert low < first["seconds_to_train"] < high


def _running_job(
    worker: WorkerProcess, user: Any, tabular_spec: Any, *, batch_sizes: list[int], min_seconds: float
) -> CalibrationJob:
    """Candidate 0 of the tabular spec submitted to the worker's device; returns once the worker runs it."""
    job = submit_to_worker(
        worker, user, tabular_spec, batch_sizes=batch_sizes, options={"min_seconds": min_seconds}
    )
    wait_for(lambda: CalibrationJob.objects.get(pk=job.pk).status == "running", timeout=60, what="running")
    return job


def test_it_recovers_a_job_whose_worker_was_killed(
    api: Any, worker: WorkerProcess, user: Any, tabular_spec: Any
) -> None:
    job = _running_job(worker, user, tabular_spec, batch_sizes=[16, 32, 64, 128], min_seconds=1.5)
    wait_for(lambda: psutil.Process(worker.proc.pid).children(), timeout=30, what="the measuring child")  # type: ignore[union-attr]
    children = worker.kill()
    assert CalibrationJob.objects.get(pk=job.pk).status == "running"  # nobody has noticed yet
    wait_for(
        lambda: not any(_alive(pid) for pid in children),
        timeout=15,
        interval=0.1,
        what="the measuring child gone with its killed worker",
    )

    worker.start()  # the same host: the same device and queue
    final = wait_for(
        lambda: (j := CalibrationJob.objects.get(pk=job.pk)).finished and j,
        timeout=120,
        what=f"the orphaned job to be recovered\n{worker.log()}",
    )
    # The new worker found the job orphaned, queued it again (attempts remain) and ran it to the end.
    assert final.status == "succeeded", (final.error, worker.log())
    assert final.attempts == 2
    assert final.measurements.filter(status="ok").count() >= 4


def test_it_cancels_a_running_job(api: Any, worker: WorkerProcess, user: Any, tabular_spec: Any) -> None:
    job = _running_job(worker, user, tabular_spec, batch_sizes=[16, 32, 64, 128, 256], min_seconds=2.0)
    response = api.post(f"/api/v1/calibrations/{job.pk}/cancel/")
    assert response.status_code == 200
    final = wait_for(
        lambda: (j := CalibrationJob.objects.get(pk=job.pk)).finished and j, timeout=30, what="cancellation"
    )
    assert final.status == "cancelled"
    assert final.measurements.count() < 5
    again = api.post(f"/api/v1/calibrations/{job.pk}/cancel/")
    assert again.status_code == 409


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
