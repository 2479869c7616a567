"""A typed client generated from the OpenAPI document by openapi-python-client runs the README's script flow
against a live gunicorn: recommendation, devices, calibration, and a 400 parsed as its error type."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from advisor import contract, running
from advisor.models import CalibrationJob
from tests.conftest import cpu_device

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GENERATOR = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "advisor_client"


@pytest.fixture
def generated(live_server_url: str, tmp_path: Path) -> Iterator[ModuleType]:
    """The client package generated from the live server's schema, importable for the test's duration."""
    request = urllib.request.Request(
        f"{live_server_url}/api/v1/schema/", headers={"Accept": "application/vnd.oai.openapi+json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        (tmp_path / "openapi.json").write_bytes(response.read())
    # no post hooks: the generator's default formats its output with a ruff it looks for on PATH
    (tmp_path / "config.json").write_text(json.dumps({"package_name_override": PACKAGE, "post_hooks": []}))
    made = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(tmp_path / "openapi.json"),
            "--config",
            str(tmp_path / "config.json"),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / "client" / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    assert "Warning" not in made.stdout + made.stderr, made.stdout + made.stderr  # every part generated
    sys.path.insert(0, str(tmp_path / "client"))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path / "client"))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _measured(batch_size: int, seconds: float) -> contract.Measurement:
    """A reliable configuration as advisor.calibration.measure() reports one (the contract's fields)."""
    return {
        "status": "ok",
        "message": "",
        "seconds_per_batch": seconds,
        "mean_seconds_per_batch": seconds,
        "trimmed_mean_seconds_per_batch": seconds,
        "iqr": 0.0,
        "iterations": 50,
        "examples_per_second": batch_size / seconds,
        "peak_memory_bytes": 1 << 20,
        "achieved_flops": None,
        "device": "cpu",
        "threads": 1,
        "batch_size": batch_size,
        "allocator": "default",
        "unreliable": False,
        "unreliable_reasons": [],
    }


def _module(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_it_runs_the_readme_flow_through_a_generated_client(
    generated: ModuleType, live_server_url: str, user: Any, tabular_spec: dict[str, Any]
) -> None:
    models = _module("models")
    recommendations = _module("api.recommendations.recommendations_create")
    devices = _module("api.devices.devices_list")
    calibrations = _module("api.calibrations.calibrations_create")
    calibration = _module("api.calibrations.calibrations_retrieve")
    token, _ = Token.objects.get_or_create(user=user)
    client = generated.AuthenticatedClient(base_url=live_server_url, token=token.key, prefix="Token")
    # registered now, after the generation, so that it is still online when the calibration is submitted
    device = cpu_device("typedclient")

    body = models.RecommendationRequest.from_dict(tabular_spec)
    answer = recommendations.sync_detailed(client=client, body=body)
    assert answer.status_code == 201, answer.content
    rec = answer.parsed
    assert isinstance(rec, models.Recommendation)
    best = rec.candidates[0]
    assert isinstance(best, models.Candidate) and isinstance(best.estimate, models.Estimate)
    assert isinstance(best.estimate.interval, models.Interval)
    assert best.estimate.seconds_to_train > 0 and best.estimate.basis.value == "catalog"

    listed = devices.sync(client=client)
    assert [d.id for d in listed] == [device.pk] and isinstance(listed[0], models.Device)

    asked = models.CalibrationRequest(
        recommendation=rec.id, candidate=0, device=device.pk, batch_sizes=[16], threads=[1]
    )
    submitted = calibrations.sync_detailed(client=client, body=asked, idempotency_key=str(uuid.uuid4()))
    assert submitted.status_code == 202, submitted.content
    job = submitted.parsed
    assert isinstance(job, models.Calibration) and job.status.value == "queued" and job.estimate is None

    # the job finished as a worker finishes it, from one measured configuration; read back, its result is a
    # Measurement and its estimate an Estimate
    assert CalibrationJob.claim(job.id)
    row = CalibrationJob.objects.get(pk=job.id)
    running.record_result(job=row, event={"batch_size": 16, "threads": 1, "result": _measured(16, 0.002)})
    running.conclude(row, None, {"status": "succeeded"})
    done = calibration.sync(client=client, id=job.id)
    assert isinstance(done, models.Calibration) and done.status.value == "succeeded"
    (result,) = done.results
    assert isinstance(result, models.Measurement) and result.seconds_per_batch == 0.002
    assert isinstance(done.estimate, models.Estimate) and done.estimate.basis.value == "measured"
    measured_at = done.estimate.measured_at
    assert isinstance(measured_at, models.MeasuredAt) and measured_at.batch_size == 16

    wrong = {**tabular_spec, "data": {**tabular_spec["data"], "input_shape": [3, 32, 32]}}
    refused = recommendations.sync_detailed(client=client, body=models.RecommendationRequest.from_dict(wrong))
    assert refused.status_code == 400
    assert isinstance(refused.parsed, models.FieldErrors)
    assert "data.input_shape" in refused.parsed.additional_properties
