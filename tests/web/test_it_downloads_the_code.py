"""The code download on the pages: each candidate's card and a probe's result offer it, and the ZIP a browser
downloads from the recommendation page runs as it comes (two updates on random data, without the advisor)."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from advisor import export
from advisor.models import Device
from advisor.probe import services as probe_services
from advisor.probe.models import ProbeJob


@pytest.mark.django_db
def test_each_candidates_card_links_its_own_code(client_for: Client, rec: Any) -> None:
    for index in range(len(rec.result["candidates"])):
        page = client_for.get(f"/recommendations/{rec.pk}/", {"c": index}).content.decode()
        assert f'href="/api/v1/recommendations/{rec.pk}/candidates/{index}/code/"' in page


@pytest.mark.django_db
def test_a_probes_result_links_its_code_once_it_split(client_for: Client, rec: Any, device: Device) -> None:
    sample = probe_services.create_sample(owner=rec.owner, demo="iris")
    job = ProbeJob.objects.create(
        owner=rec.owner, recommendation=rec, sample=sample, device=device, time_limit_seconds=60,
        shallow_candidate=0,
    )  # fmt: skip
    link = f'href="/api/v1/probes/{job.pk}/code/"'
    assert link not in client_for.get(f"/probes/{job.pk}/").content.decode()
    job.results = {"split": {"train": 90, "validation": 30, "test": 30, "indices": {}}}
    job.verdict = {"chosen": "shallow", "text": "", "notes": [], "reasons": []}
    job.save()
    page = client_for.get(f"/probes/{job.pk}/").content.decode()
    assert link in page and "Download the code of the shallow network" in page


@pytest.mark.browser
@pytest.mark.slow
def test_the_zip_from_the_recommendation_page_runs(page: Any, rec: Any, tmp_path: Path) -> None:
    page.goto(f"/recommendations/{rec.pk}/")
    with page.expect_download() as caught:
        page.click("#code-download")
    download = caught.value
    archive = tmp_path / download.suggested_filename
    download.save_as(archive)
    with zipfile.ZipFile(archive) as unpacked:
        unpacked.extractall(tmp_path)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert folder.name == f"recommendation-{rec.pk}-candidate-1-{rec.result['candidates'][0]['family']}"
    done = subprocess.run(
        export.isolated(["--synthetic", "--max-steps", "2", "--threads", "1"]),
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "step 2/2: loss" in done.stdout
