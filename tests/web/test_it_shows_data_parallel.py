"""The calibration page shows a data-parallel measurement's rows, as the worker saves them."""

from __future__ import annotations

from typing import Any

from django.test import Client

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
    assert "gloo" in table and "80%" in table and "12.8 k" in table  # 2 x 32 / 0.005 examples/s
    assert "40%" in table  # 2 ms of all-reduce in a 5 ms step


def test_it_shows_no_data_parallel_table_without_rows(client_for: Client, rec: Any, device: Device) -> None:
    job = finished_job(rec, device)
    assert 'id="data-parallel"' not in client_for.get(f"/calibrations/{job.pk}/").content.decode()
