"""The probe API: samples (upload, demo, ownership, delete) and probes (queue, refuse, cancel)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from advisor.probe.models import DataSample, ProbeJob

pytestmark = pytest.mark.django_db

IRIS_CSV = "a,b,c,d,species\n" + "".join(
    f"{i % 7}.1,{i % 5}.2,{i % 3}.3,{i % 4}.4,{['setosa', 'versicolor', 'virginica'][i % 3]}\n"
    for i in range(45)
)


FOUR_CLASSES = "a,b,c,d,kind\n" + "".join(
    f"{i % 7}.1,{i % 5}.2,{i % 3}.3,{i % 4}.4,k{i % 4}\n" for i in range(40)
)
FIVE_COLUMNS = "a,b,c,d,e,species\n" + "".join(
    f"{i % 7},{i % 5},{i % 3},{i % 4},1,s{i % 3}\n" for i in range(30)
)


def upload(name: str, data: bytes, **fields: Any) -> dict[str, Any]:
    return {"file": SimpleUploadedFile(name, data), **fields}


def zip_slip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../../outside/a.png", b"x")
        z.writestr("cat/b.png", b"x")
    return buf.getvalue()


def test_it_uploads_a_csv_and_shows_it_only_to_its_owner(
    api: APIClient, other_user: Any, samples_dir: Path, iris_rec: Any
) -> None:
    answer = api.post(
        "/api/v1/samples/",
        upload("iris.csv", IRIS_CSV.encode(), label_column="species", recommendation=iris_rec.pk),
        format="multipart",
    )
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (
        body["examples"] == 45
        and body["input_shape"] == [4]
        and body["classes"]
        == [
            "setosa",
            "versicolor",
            "virginica",
        ]
    )
    assert len(list(samples_dir.iterdir())) == 1  # type: ignore[attr-defined]
    assert [s["id"] for s in api.get("/api/v1/samples/").json()["results"]] == [body["id"]]
    other = APIClient()
    other.force_authenticate(other_user)
    assert other.get(f"/api/v1/samples/{body['id']}/").status_code == 404
    assert other.delete(f"/api/v1/samples/{body['id']}/").status_code == 404


@pytest.mark.parametrize(
    ("name", "data", "fields", "key", "words"),
    [
        (
            "iris.csv",
            IRIS_CSV.replace("2.2", "x2").encode(),
            {"label_column": "species"},
            "file",
            "not a finite",
        ),
        ("iris.csv", b"", {"label_column": "species"}, "file", "the file is empty"),
        ("iris.csv", IRIS_CSV.encode() * 40, {"label_column": "species"}, "file", "the limit is"),
        ("imgs.zip", zip_slip(), {}, "file", "outside its folder"),
        ("four.csv", FOUR_CLASSES.encode(), {"label_column": "kind"}, "data.outputs", "4 classes"),
        ("iris.csv", IRIS_CSV.encode(), {"label_column": "kind"}, "label_column", "no column 'kind'"),
        ("wide.csv", FIVE_COLUMNS.encode(), {"label_column": "species"}, "data.input_shape", "declares [4]"),
    ],
    ids=["non-numeric", "empty", "oversize", "zip-slip", "classes-vs-outputs", "no-column", "wrong-shape"],
)
def test_it_refuses_a_bad_upload_and_stores_nothing(
    api: APIClient,
    settings: Any,
    samples_dir: Path,
    iris_rec: Any,
    name: str,
    data: bytes,
    fields: dict[str, Any],
    key: str,
    words: str,
) -> None:
    settings.SAMPLE_MAX_BYTES = 4000
    answer = api.post(
        "/api/v1/samples/", upload(name, data, recommendation=iris_rec.pk, **fields), format="multipart"
    )
    assert answer.status_code == 400
    assert words in " ".join(answer.json()[key])
    assert not DataSample.objects.exists()
    assert not samples_dir.exists() or not list(samples_dir.iterdir())  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body",
    [
        {"demo": "mnist"},
        {"file": "not a file"},
        {},
        {"demo": "iris", "recommendation": 10**30},
        {"demo": "iris", "name": "a\x00b"},
    ],
)
def test_it_answers_junk_with_400(api: APIClient, samples_dir: Path, body: dict[str, Any]) -> None:
    assert api.post("/api/v1/samples/", body, format="multipart").status_code == 400
    assert not DataSample.objects.exists()


def test_it_keeps_a_demo_sample_and_deletes_it_with_its_file(
    api: APIClient, samples_dir: Path, django_capture_on_commit_callbacks: Any
) -> None:
    answer = api.post("/api/v1/samples/", {"demo": "digits"}, format="json")
    assert answer.status_code == 201
    assert answer.json()["input_shape"] == [1, 8, 8] and answer.json()["outputs"] == 10
    stored = DataSample.objects.get().file
    assert stored.exists()
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/v1/samples/{answer.json()['id']}/").status_code == 204
    assert not stored.exists() and not DataSample.objects.exists()


def test_it_queues_a_probe_with_the_shallow_and_deep_candidates(
    api: APIClient, samples_dir: Path, iris_rec: Any, device: Any
) -> None:
    sample = api.post("/api/v1/samples/", {"demo": "iris"}, format="json").json()
    answer = api.post(
        "/api/v1/probes/",
        {
            "recommendation": iris_rec.pk,
            "sample": sample["id"],
            "device": device.id,
            "time_limit_seconds": 30,
        },
        format="json",
    )
    assert answer.status_code == 202, answer.json()
    job = answer.json()
    depths = [c["depth"] for c in iris_rec.result["candidates"]]
    assert depths[job["shallow_candidate"]] == "shallow" and depths[job["deep_candidate"]] == "deep"
    assert job["status"] == "queued" and job["device"] == device.id
    assert api.delete(f"/api/v1/samples/{sample['id']}/").status_code == 409  # a queued probe needs it
    cancelled = api.post(f"/api/v1/probes/{job['id']}/cancel/")
    assert cancelled.json()["status"] == "cancelled"
    assert api.post(f"/api/v1/probes/{job['id']}/cancel/").status_code == 409


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"device": "nowhere-cpu0"}, "device", "no device"),
        ({"sample": 999999}, "sample", "no such sample"),
        ({"recommendation": 999999}, "recommendation", "no such recommendation"),
        ({"time_limit_seconds": 100000}, "time_limit_seconds", "less than or equal"),
        ({"time_limit_seconds": 5000}, "time_limit_seconds", "must be from 1 to"),
        ({"use": "digits"}, "data.input_shape", "the task declares [4]"),
    ],
)
def test_it_refuses_a_probe_that_cannot_run(
    api: APIClient,
    samples_dir: Path,
    iris_rec: Any,
    device: Any,
    change: dict[str, Any],
    key: str,
    words: str,
) -> None:
    demo = change.pop("use", "iris")
    sample = api.post("/api/v1/samples/", {"demo": demo}, format="json").json()
    body = {"recommendation": iris_rec.pk, "sample": sample["id"], "device": device.id, **change}
    answer = api.post("/api/v1/probes/", body, format="json")
    assert answer.status_code == 400
    assert words in " ".join(answer.json()[key])
    assert not ProbeJob.objects.exists()


def test_it_refuses_an_offline_device(api: APIClient, samples_dir: Path, iris_rec: Any, device: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    device.last_seen = timezone.now() - timedelta(hours=1)
    device.save()
    sample = api.post("/api/v1/samples/", {"demo": "iris"}, format="json").json()
    body = {"recommendation": iris_rec.pk, "sample": sample["id"], "device": device.id}
    assert "offline" in " ".join(api.post("/api/v1/probes/", body, format="json").json()["device"])


def test_it_lists_its_endpoints_in_the_schema(api: APIClient) -> None:
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    for path in (
        "/api/v1/samples/",
        "/api/v1/samples/{id}/",
        "/api/v1/probes/",
        "/api/v1/probes/{id}/cancel/",
    ):
        assert path in schema["paths"]
    assert "multipart/form-data" in schema["paths"]["/api/v1/samples/"]["post"]["requestBody"]["content"]


def test_it_stores_the_canonical_arrays(api: APIClient, samples_dir: Path) -> None:
    api.post(
        "/api/v1/samples/", upload("iris.csv", IRIS_CSV.encode(), label_column="species"), format="multipart"
    )
    with np.load(DataSample.objects.get().file, allow_pickle=False) as stored:
        assert stored["x"].shape == (45, 4) and stored["x"].dtype == np.float32


def test_it_caps_the_probes_a_user_has_in_flight(
    api: APIClient, settings: Any, samples_dir: Path, iris_rec: Any, device: Any
) -> None:
    settings.PROBES_ACTIVE_PER_USER = 1
    sample = api.post("/api/v1/samples/", {"demo": "iris"}, format="json").json()
    body = {"recommendation": iris_rec.pk, "sample": sample["id"], "device": device.id}
    first = api.post("/api/v1/probes/", body, format="json")
    assert first.status_code == 202
    assert "queued or running" in " ".join(api.post("/api/v1/probes/", body, format="json").json()["probe"])
    listed = api.get(f"/api/v1/probes/?recommendation={iris_rec.pk}").json()["results"]
    assert [p["id"] for p in listed] == [first.json()["id"]]
    assert api.get("/api/v1/probes/?recommendation=999999").json()["results"] == []
    assert api.get("/api/v1/probes/?recommendation=abc").status_code == 400


def test_it_removes_a_users_sample_files_with_the_user(
    api: APIClient, user: Any, samples_dir: Path, django_capture_on_commit_callbacks: Any
) -> None:
    api.post("/api/v1/samples/", {"demo": "iris"}, format="json")
    stored = DataSample.objects.get().file
    with django_capture_on_commit_callbacks(execute=True):
        user.delete()
    assert not stored.exists() and not DataSample.objects.exists()
