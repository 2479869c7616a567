"""A calibration with data_parallel on a real worker: after its sweep, DDP ranks at each world size."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import WorkerProcess, wait_for

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
