"""A calibration with data_parallel on a real worker: after its sweep, DDP ranks at each world size."""

from __future__ import annotations

from typing import Any

import psutil
import pytest

from advisor.models import CalibrationJob
from tests.conftest import WorkerProcess, submit_to_worker, wait_for
from tests.processes import spawned_children

pytestmark = [pytest.mark.slow, pytest.mark.postgres_redis]


def test_it_measures_each_world_size_after_the_sweep(
    api: Any, worker: WorkerProcess, tabular_spec: Any
) -> None:
    rec = api.post("/api/v1/recommendations/", tabular_spec, format="json")
    assert rec.status_code == 201, rec.content
    submitted = api.post(
        "/api/v1/calibrations/",
        {
            "recommendation": rec.json()["id"],
            "device": worker.device_id,
            "batch_sizes": [32],
            "threads": [1],
            "data_parallel": [1, 2],
            "time_limit_seconds": 280,
        },
        format="json",
    )
    assert submitted.status_code == 202, submitted.content
    job_id = submitted.json()["id"]

    def finished() -> dict[str, Any] | None:
        job: dict[str, Any] = api.get(f"/api/v1/calibrations/{job_id}/").json()
        return job if job["status"] in {"succeeded", "failed", "cancelled"} else None

    job = wait_for(finished, timeout=300, interval=1.0, what=f"calibration {job_id}\n{worker.log()}")
    assert job["status"] == "succeeded", (job["error"], worker.log())
    assert job["data_parallel"] == [1, 2]
    one, two = job["summary"]["data_parallel"]
    assert (one["world_size"], two["world_size"]) == (1, 2)
    assert two["backend"] == "gloo" and two["devices"] == ["cpu", "cpu"]
    assert two["examples_per_second"] > 0 and two["allreduce_seconds"] > 0
    assert two["efficiency"] == pytest.approx(two["examples_per_second"] / (2 * one["examples_per_second"]))


def _ranks_of(worker: WorkerProcess) -> list[psutil.Process]:
    assert worker.proc is not None
    return spawned_children(psutil.Process(worker.proc.pid))


def _long_job(worker: WorkerProcess, user: Any, tabular_spec: Any) -> CalibrationJob:
    """A quick sweep, then 2 ranks that would time for minutes; returns once both ranks run."""
    job = submit_to_worker(
        worker,
        user,
        tabular_spec,
        batch_sizes=[16],
        data_parallel=[2],
        time_limit_seconds=600,
        options={"data_parallel_min_seconds": 500},
    )
    wait_for(
        lambda: (
            CalibrationJob.objects.get(pk=job.pk).step.startswith("data parallel")
            and len(_ranks_of(worker)) == 2
        ),
        timeout=180,
        what=f"two ranks\n{worker.log()}",
    )
    return job


def test_it_stops_every_rank_when_a_data_parallel_job_is_cancelled(
    api: Any, worker: WorkerProcess, user: Any, tabular_spec: Any
) -> None:
    job = _long_job(worker, user, tabular_spec)
    ranks = _ranks_of(worker)
    assert api.post(f"/api/v1/calibrations/{job.pk}/cancel/").status_code == 200

    final = wait_for(
        lambda: (j := CalibrationJob.objects.get(pk=job.pk)).finished and j, timeout=60, what="cancel"
    )
    assert final.status == "cancelled"
    _, alive = psutil.wait_procs(ranks, timeout=10)
    assert not alive, "a rank outlived its cancelled job"


def test_it_fails_a_data_parallel_job_whose_rank_died_with_the_reason(
    worker: WorkerProcess, user: Any, tabular_spec: Any
) -> None:
    job = _long_job(worker, user, tabular_spec)
    ranks = _ranks_of(worker)
    ranks[-1].kill()

    final = wait_for(
        lambda: (j := CalibrationJob.objects.get(pk=job.pk)).finished and j, timeout=60, what="failure"
    )
    assert final.status == "failed" and "rank" in final.error, final.error
    _, alive = psutil.wait_procs(ranks, timeout=10)
    assert not alive, "a rank outlived its failed job"
