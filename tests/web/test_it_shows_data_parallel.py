"""The calibration page shows a data-parallel measurement's rows, as the worker saves them."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from advisor import services
from advisor.models import CalibrationJob, Device
from tests.web.conftest import finished_job


def _row(world: int, seconds: float, allreduce: float, efficiency: float) -> dict[str, Any]:
    return {
        "world_size": world,
        "backend": "gloo",
        "sync": "sync",
        "seconds_per_step": seconds,
        "examples_per_second": world * 32 / seconds,
        "efficiency": efficiency,
        "allreduce_seconds": allreduce,
        "allreduce_share": allreduce / seconds,
        "threads_per_rank": 2 // world,
    }


def test_it_shows_each_world_size(client_for: Client, rec: Any, device: Device) -> None:
    job = finished_job(rec, device)
    rows = [_row(1, 0.004, 0.0001, 1.0), _row(2, 0.005, 0.002, 0.8)]
    CalibrationJob.objects.filter(pk=job.pk).update(summary={**job.summary, "data_parallel": rows})

    html = client_for.get(f"/calibrations/{job.pk}/").content.decode()

    table = html[html.index('id="data-parallel"') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == 3  # the header and one row per world size
    assert "gloo" in table and "80%" in table and "12,800" in table  # 2 x 32 / 0.005 examples/s
    assert "40%" in table  # 2 ms of all-reduce in a 5 ms step


def test_it_shows_no_data_parallel_table_without_rows(client_for: Client, rec: Any, device: Device) -> None:
    job = finished_job(rec, device)
    assert 'id="data-parallel"' not in client_for.get(f"/calibrations/{job.pk}/").content.decode()


def _gpu_plan(user: Any) -> Any:
    """ImageNet with a 3 h budget on a box of 8 GPUs: the plan trains data parallel on several of them."""
    spec = {
        "task": "vision",
        "data": {"examples": 1_281_167, "input_shape": [3, 224, 224], "outputs": 1000},
        "hardware": {"cpu_cores": 8, "ram_gb": 64, "gpu": "gtx-1080", "gpus_per_node": 8},
        "target": {"time_budget_hours": 3},
    }
    return services.advise(owner=user, spec=spec)


def test_it_times_several_gpus_from_a_finished_data_parallel_calibration(
    client_for: Client, user: Any
) -> None:
    rec = _gpu_plan(user)
    api = APIClient()
    api.force_authenticate(user)
    before = api.get(f"/api/v1/recommendations/{rec.pk}/").json()["candidates"][0]["estimate"]
    assert before["devices"] > 1 and before["scaling"]["basis"] == "W §III-H constant"
    assert "W §III-H constant" in client_for.get(f"/recommendations/{rec.pk}/").content.decode()

    gpu = Device.objects.create(
        id="box-cuda0", host="box", kind="cuda", name="Test GPU", queue="device.box-cuda0"
    )
    rows = [{**_row(w, 0.01 * w**0.5, 0.001, e), "backend": "nccl"} for w, e in ((1, 1.0), (2, 0.5))]
    job = CalibrationJob.objects.create(
        owner=user,
        recommendation=rec,
        candidate=0,
        device=gpu,
        time_limit_seconds=60,
        status=CalibrationJob.SUCCEEDED,
        finished_at=timezone.now(),
        options={"data_parallel": [1, 2]},
        summary={"data_parallel": rows},
    )

    after = api.get(f"/api/v1/recommendations/{rec.pk}/").json()["candidates"][0]["estimate"]
    assert after["scaling"]["basis"] == "measured" and after["scaling"]["calibration"] == job.pk
    assert after["seconds_per_batch"] == before["seconds_per_batch"]
    assert after["seconds_to_train"] != before["seconds_to_train"]  # 50% at 2, not the constant's 77%
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    scaling = html[html.index('id="scaling"') :]
    assert f"calibration #{job.pk}" in scaling[: scaling.index("</p>")]
