"""POST calibrations/ with data_parallel on a GPU device: one rank per GPU its worker sees (NCCL).

Validation only: no GPU is needed, the device rows are what a worker on a GPU box would announce."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from advisor import workers
from advisor.models import CalibrationJob, Device, Recommendation

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/calibrations/"


def _gpu(host: str, index: int, **details: Any) -> Device:
    (row,) = workers.register_devices(
        host=host,
        worker=f"cuda{index}@{host}",
        devices=[{"kind": "cuda", "index": index, "name": "Test GPU", "memory_bytes": 80 * 2**30, **details}],
    )
    return row


def _post(api: APIClient, rec: Recommendation, device: Device, worlds: list[int]) -> Any:
    body = {"recommendation": rec.pk, "candidate": 0, "device": device.pk, "data_parallel": worlds}
    return api.post(URL, body, format="json")


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_it_accepts_world_sizes_up_to_the_gpus_the_worker_sees(
    api: APIClient, rec: Recommendation, gpus: int
) -> None:
    device = _gpu("box", 0, host_gpus=gpus)
    worlds = sorted({1, max(1, gpus // 2), gpus})
    response = _post(api, rec, device, worlds)
    assert response.status_code == 202, response.content
    assert response.json()["data_parallel"] == worlds


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_it_refuses_one_rank_more_than_the_gpus_naming_the_limit(
    api: APIClient, rec: Recommendation, gpus: int
) -> None:
    device = _gpu("box", 0, host_gpus=gpus)
    response = _post(api, rec, device, [1, gpus + 1])
    assert response.status_code == 400, response.content
    (message,) = response.json()["data_parallel"]
    assert f"from 1 to {gpus}," in message and "GPUs" in message
    assert not CalibrationJob.objects.exists()


def test_it_counts_the_hosts_gpu_rows_when_the_worker_did_not_say(
    api: APIClient, rec: Recommendation
) -> None:
    first, _ = _gpu("older", 0), _gpu("older", 1)
    assert _post(api, rec, first, [1, 2]).status_code == 202
    refused = _post(api, rec, first, [3])
    assert refused.status_code == 400 and "from 1 to 2," in refused.json()["data_parallel"][0]


def test_it_lists_the_gpus_a_gpu_worker_sees(api: APIClient) -> None:
    _gpu("box", 0, host_gpus=4)
    listed = {d["id"]: d["host_gpus"] for d in api.get("/api/v1/devices/").json()}
    assert listed["box-cuda0"] == 4
