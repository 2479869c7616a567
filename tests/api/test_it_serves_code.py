"""GET recommendations/{id}/candidates/{n}/code/ and probes/{id}/code/: a candidate as plain PyTorch code, a
ZIP or one file, owner-only; with the allocator a calibration measured and the split a probe recorded."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from advisor.models import CalibrationJob, Device, Recommendation
from advisor.probe import services as probe_services
from advisor.probe.models import ProbeJob

pytestmark = pytest.mark.django_db


def url(rec: Recommendation, index: int = 0) -> str:
    return f"/api/v1/recommendations/{rec.pk}/candidates/{index}/code/"


def unzip(content: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name.split("/", 1)[1]: archive.read(name).decode() for name in archive.namelist()}


def test_it_answers_a_zip_of_the_candidates_code(api: APIClient, rec: Recommendation) -> None:
    answer = api.get(url(rec, 1))
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/zip"
    family = rec.result["candidates"][1]["family"]
    folder = f"recommendation-{rec.pk}-candidate-2-{family}"
    assert answer["Content-Disposition"] == f'attachment; filename="{folder}.zip"'
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        assert sorted(archive.namelist()) == [f"{folder}/{n}" for n in ("README.md", "model.py", "train.py")]
    files = unzip(answer.content)
    assert f"PARAMETERS = {rec.result['candidates'][1]['parameters']}" in files["model.py"]
    assert files["model.py"].startswith(f'"""Candidate 2 of recommendation #{rec.pk}: the ')
    assert files["train.py"].startswith(f'"""Candidate 2 of recommendation #{rec.pk}: trains the ')
    assert "from model import BUILDERS" in files["train.py"]
    assert not any("import advisor" in text or "from advisor" in text for text in files.values())


def test_it_answers_one_file_as_text(api: APIClient, rec: Recommendation) -> None:
    whole = unzip(api.get(url(rec)).content)
    for name, media in (
        ("model.py", "text/x-python"),
        ("train.py", "text/x-python"),
        ("README.md", "text/markdown"),
    ):
        answer = api.get(url(rec), {"file": name})
        assert answer.status_code == 200
        assert answer["Content-Type"] == f"{media}; charset=utf-8"
        assert answer["Content-Disposition"] == f'attachment; filename="{name}"'
        assert answer.content.decode() == whole[name]


def test_it_ignores_what_accept_asks(api: APIClient, rec: Recommendation) -> None:
    assert api.get(url(rec), HTTP_ACCEPT="application/zip").status_code == 200
    missing = api.get(url(rec, 99), HTTP_ACCEPT="text/x-python")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/json"


def test_it_refuses_what_is_not_there(api: APIClient, rec: Recommendation) -> None:
    assert api.get(url(rec), {"file": "setup.py"}).json() == {
        "file": ["one of model.py, train.py, README.md, split.json"]
    }
    no_split = api.get(url(rec), {"file": "split.json"})
    assert no_split.status_code == 404 and "split.json" in no_split.json()["detail"]
    assert api.get(url(rec, len(rec.result["candidates"]))).status_code == 404


def test_it_serves_only_the_owners_code(
    api: APIClient, other_api: APIClient, staff_api: APIClient, rec: Recommendation
) -> None:
    assert other_api.get(url(rec)).status_code == 404
    assert staff_api.get(url(rec)).status_code == 200
    assert APIClient().get(url(rec)).status_code == 401


def test_it_starts_train_py_with_the_allocator_a_calibration_measured(
    api: APIClient, rec: Recommendation, device: Device
) -> None:
    env = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "68719476736"}
    finding = {"checked": True, "recommended": "tuned", "env": env, "text": "Measured 21% less time."}
    job = CalibrationJob.objects.create(
        owner=rec.owner, recommendation=rec, candidate=0, device=device, batch_sizes=[8], threads=[1],
        time_limit_seconds=60, status=CalibrationJob.SUCCEEDED, finished_at=timezone.now(),
        summary={"allocator": finding},
    )  # fmt: skip
    files = unzip(api.get(url(rec)).content)
    command = "MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=68719476736 python train.py"
    assert f"{command} --data FILE" in files["train.py"]
    assert f"{command} --data FILE" in files["README.md"]
    assert '"MALLOC_MMAP_THRESHOLD_": "4294967296"' in files["train.py"]
    assert f"cpu.allocator: Measured 21% less time. (calibration #{job.pk})" in files["train.py"]
    assert "MALLOC_" not in unzip(api.get(url(rec, 1)).content)["README.md"]  # another candidate's


@pytest.fixture
def probe(rec: Recommendation, device: Device) -> ProbeJob:
    sample = probe_services.create_sample(owner=rec.owner, demo="iris")
    indices = {"train": [3, 0, 4], "validation": [1], "test": [2]}
    results = {
        "split": {
            "train": 3,
            "validation": 1,
            "test": 1,
            "sample": {"examples": 5},
            "indices": indices,
            "seed": 7,
        },
        "baseline": {"metric": "accuracy"},
        "shallow": {"score": 0.8, "best_epoch": 3},
    }
    return ProbeJob.objects.create(
        owner=rec.owner, recommendation=rec, sample=sample, device=device, time_limit_seconds=60,
        shallow_candidate=1, deep_candidate=None, results=results, verdict={"chosen": "shallow"},
    )  # fmt: skip


def test_it_gives_a_probes_code_with_its_split(api: APIClient, probe: ProbeJob) -> None:
    answer = api.get(f"/api/v1/probes/{probe.pk}/code/")
    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    files = unzip(answer.content)
    assert set(files) == {"model.py", "train.py", "README.md", "split.json"}
    split = json.loads(files["split.json"])
    assert (split["train"], split["validation"], split["test"]) == ([3, 0, 4], [1], [2])
    assert split["examples"] == 5 and split["probe"] == probe.pk
    assert "seed=7," in files["train.py"]
    assert files["model.py"] == unzip(api.get(url(probe.recommendation, 1)).content)["model.py"]
    assert "scored 0.8000 (accuracy)" in files["README.md"]
    assert "datasets.load_iris()" in files["README.md"]
    one = api.get(f"/api/v1/probes/{probe.pk}/code/", {"file": "split.json"})
    assert one["Content-Type"] == "application/json" and json.loads(one.content) == split


def test_it_refuses_a_role_the_probe_did_not_train(
    api: APIClient, other_api: APIClient, probe: ProbeJob
) -> None:
    code = f"/api/v1/probes/{probe.pk}/code/"
    assert api.get(code, {"role": "deep"}).status_code == 404
    assert api.get(code, {"role": "middle"}).json() == {"role": ["one of shallow, deep"]}
    assert other_api.get(code).status_code == 404


def test_it_documents_the_downloads_in_the_schema(api: APIClient) -> None:
    schema = api.get("/api/v1/schema/", {"format": "json"}).json()
    for path in ("/api/v1/recommendations/{id}/candidates/{index}/code/", "/api/v1/probes/{id}/code/"):
        content = schema["paths"][path]["get"]["responses"]["200"]["content"]
        assert set(content) == {"application/zip", "text/x-python", "text/markdown", "application/json"}
        assert content["application/zip"]["schema"] == {"type": "string", "format": "binary"}
