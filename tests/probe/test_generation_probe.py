"""Generation probes through the API (POST samples/, POST probes/): an unlabelled sample is accepted for a
generation recommendation and refused for a supervised one; and one generation probe end to end through a
real `manage.py worker` process, its page and its recommendation's section."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from advisor.probe.models import ProbeJob
from tests.conftest import WorkerProcess, wait_for
from tests.probe.test_generation_learning import RING_SPEC, ring


def npz(**arrays: np.ndarray) -> SimpleUploadedFile:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return SimpleUploadedFile("ring.npz", buf.getvalue())


def unlabelled_csv(n: int, columns: int) -> SimpleUploadedFile:
    rows = "".join(",".join(f"{(i * 7 + j) % 11}.5" for j in range(columns)) + "\n" for i in range(n))
    header = ",".join(f"v{j}" for j in range(columns))
    return SimpleUploadedFile("values.csv", f"{header}\n{rows}".encode())


def _recommend(api: APIClient, spec: dict[str, Any]) -> int:
    answer = api.post("/api/v1/recommendations/", spec, format="json")
    assert answer.status_code == 201, answer.content
    return int(answer.json()["id"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    "upload",
    [
        lambda: npz(x=ring(300)),  # x only
        lambda: unlabelled_csv(300, 2),  # no label column
    ],
)
def test_it_accepts_an_unlabelled_sample_and_queues_a_generation_probe(
    api: APIClient, samples_dir: Path, device: Any, upload: Any
) -> None:
    rec = _recommend(api, RING_SPEC)
    sample = api.post("/api/v1/samples/", {"file": upload(), "recommendation": rec}, format="multipart")
    assert sample.status_code == 201, sample.json()
    assert sample.json()["label_kind"] == "none"
    body = {
        "recommendation": rec,
        "sample": sample.json()["id"],
        "device": device.id,
        "time_limit_seconds": 30,
    }
    answer = api.post("/api/v1/probes/", body, format="json")
    assert answer.status_code == 202, answer.json()
    job = answer.json()
    first = api.get(f"/api/v1/recommendations/{rec}/").json()["candidates"][0]["family"]
    assert job["shallow_candidate"] is None and job["deep_candidate"] == 0 and first in ("vae", "gan")
    code = api.get(f"/api/v1/probes/{job['id']}/code/")  # the generator's code, role deep
    assert code.status_code == 200 and code["Content-Type"] == "application/zip"
    assert api.post(f"/api/v1/probes/{job['id']}/cancel/").json()["status"] == "cancelled"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spec", "upload", "key", "words"),
    [
        # a supervised task still needs labels: an unlabelled sample is refused, kept or not
        (None, lambda: unlabelled_csv(60, 4), "label_column", "classification needs class labels"),
        # a generation task needs its examples' shape and enough of them to hold some out
        (RING_SPEC, lambda: unlabelled_csv(60, 3), "data.input_shape", "the task declares [2]"),
        (RING_SPEC, lambda: npz(x=ring(30)), "file", "a generation probe needs at least 50"),
    ],
)
def test_it_refuses_a_sample_that_does_not_fit_the_task(
    api: APIClient,
    samples_dir: Path,
    device: Any,
    iris_rec: Any,
    spec: dict[str, Any] | None,
    upload: Any,
    key: str,
    words: str,
) -> None:
    rec = iris_rec.pk if spec is None else _recommend(api, spec)
    checked = api.post("/api/v1/samples/", {"file": upload(), "recommendation": rec}, format="multipart")
    assert checked.status_code == 400 and words in " ".join(checked.json()[key])
    kept = api.post("/api/v1/samples/", {"file": upload()}, format="multipart")
    assert kept.status_code == 201, kept.json()
    body = {"recommendation": rec, "sample": kept.json()["id"], "device": device.id}
    answer = api.post("/api/v1/probes/", body, format="json")
    assert answer.status_code == 400 and words in " ".join(answer.json()[key])
    assert not ProbeJob.objects.exists()


@pytest.mark.slow
def test_it_probes_a_generator_on_a_worker_and_shows_its_score(
    api: Any, user: Any, worker: WorkerProcess, samples_dir: Any
) -> None:
    rec = _recommend(api, RING_SPEC)
    sample = api.post(
        "/api/v1/samples/", {"file": npz(x=ring(600)), "recommendation": rec}, format="multipart"
    )
    assert sample.status_code == 201, sample.json()
    body = {"recommendation": rec, "sample": sample.json()["id"], "device": worker.device_id}
    pk = api.post("/api/v1/probes/", {**body, "time_limit_seconds": 30}, format="json").json()["id"]

    def done() -> dict[str, Any] | None:
        job = api.get(f"/api/v1/probes/{pk}/").json()
        return job if job["status"] in ("succeeded", "failed", "cancelled") else None

    job = wait_for(done, timeout=150, what=f"probe {pk} to finish\n{worker.log()[-3000:]}")
    assert job["status"] == "succeeded", (job["error"], worker.log()[-3000:])
    results, verdict = job["results"], job["verdict"]
    assert {"split", "baseline", "generator", "verdict", "timing"} <= set(results)
    generator = results["generator"]
    assert 0.0 <= generator["score"] <= 1.0 and generator["curve"] and generator["updates"] > 0
    assert results["baseline"]["model"].startswith("Gaussian mixture")
    assert verdict["metric"] == "two_sample" and verdict["target"] == 0.8
    assert verdict["score"] == generator["score"] and verdict["met"] is (generator["score"] >= 0.8)

    page = Client()
    page.force_login(user)
    html = page.get(f"/probes/{pk}/").content.decode()
    assert "Generation probe" in html and verdict["text"].split(":")[0] in html and "<svg" in html
    assert page.get(f"/probes/{pk}/", HTTP_HX_REQUEST="true").status_code == 286  # htmx: stop polling
    section = page.get(f"/recommendations/{rec}/").content.decode()
    assert 'id="probe-generation"' in section and f"/probes/{pk}/" in section


@pytest.mark.django_db
def test_its_pages_offer_a_generation_probe(user: Any, api: APIClient) -> None:
    rec = _recommend(api, RING_SPEC)
    page = Client()
    page.force_login(user)
    section = page.get(f"/recommendations/{rec}/").content.decode()
    assert 'id="probe-generation"' in section and "two-sample" in section
    new = page.get(f"/recommendations/{rec}/probe/").content.decode()
    assert 'id="generation-probe"' in new and "(target 0.8)" in new
