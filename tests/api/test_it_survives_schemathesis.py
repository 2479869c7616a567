"""Schemathesis 4 against the project's own generated schema, on a live gunicorn server.

Every operation is fuzzed, OPTIONS and HEAD included (the schema does not list them, so the fuzzed copy adds
them), with the four conformance checks; the stateful phase follows links from each create to its `{id}`
operations so they are reached with real ids. The calibration throttle is lifted for the run, or most
answers would be 429s. A bounded run: SCHEMATHESIS_EXAMPLES per operation (default 15); the committed figure
is this test with 2,000+ cases and SCHEMATHESIS_REPORT set (bench/results/fuzz_shared2core/README.md)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BIN = Path(sys.executable).parent
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
# What each create answers with, and where the new object's id is: the links the stateful phase follows.
CREATES = {
    "/api/v1/recommendations/": "201",
    "/api/v1/calibrations/": "202",
    "/api/v1/samples/": "201",
    "/api/v1/probes/": "202",
}
JSON_OBJECT = {"application/json": {"schema": {"type": "object"}}}
IRIS = {  # the bundled iris sample's task
    "task": "tabular",
    "data": {"examples": 150, "input_shape": [4], "outputs": 3},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"accuracy": 0.9},
}


def with_every_method(schema: dict[str, Any], ids: dict[str, int] | None = None) -> dict[str, Any]:
    """The schema plus OPTIONS on every path and HEAD on every GET (DRF answers both; drf-spectacular does not
    list them), links from each create to the operations on the created object, and `ids` (collection path
    -> an object of the caller's) as the example of each `{id}`, so every `{id}` operation meets a real one
    even where the fuzzer rarely creates one (a calibration needs a valid recommendation and device)."""
    schema = copy.deepcopy(schema)
    for path, ops in schema["paths"].items():
        # a path of its own in `ids` first, else its collection's
        real = (ids or {}).get(path) or next(
            (pk for prefix, pk in (ids or {}).items() if path.startswith(f"{prefix}{{id}}")), None
        )
        for op in ops.values():
            for param in op.get("parameters", []) if real is not None else []:
                if param.get("in") == "path" and param.get("name") == "id":
                    param["example"] = str(real)  # the schema types path ids as digit strings
        params = [p for op in ops.values() for p in op.get("parameters", []) if p.get("in") == "path"]
        params = list({p["name"]: p for p in params}.values())
        errors = {"401": {"description": "anonymous"}, "404": {"description": "not yours"}}
        if "403" in ops.get("get", {}).get("responses", {}):  # staff only: OPTIONS is refused alike
            errors["403"] = {"description": "not staff"}
        ops["options"] = {
            "operationId": f"options {path}",
            "parameters": params,
            "responses": {"200": {"description": "metadata", "content": JSON_OBJECT}, **errors},
        }
        if "get" in ops:
            ops["head"] = {
                "operationId": f"head {path}",
                "parameters": copy.deepcopy(ops["get"].get("parameters", [])),
                "responses": {code: {"description": "as GET"} for code in ops["get"]["responses"]} | errors,
            }
    for collection, code in CREATES.items():
        detail = f"{collection}{{id}}/"
        links = {
            f"{method}{op_path.removeprefix(detail).rstrip('/') or 'detail'}": {
                "operationId": schema["paths"][op_path][method]["operationId"],
                "parameters": {"id": "$response.body#/id"},
            }
            for op_path in schema["paths"]
            if op_path.startswith(detail)
            for method in schema["paths"][op_path]
            if method in {"get", "post", "delete"}
        }
        schema["paths"][collection]["post"]["responses"][code]["links"] = links
    return schema


@pytest.fixture(autouse=True)
def _generous_throttle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read by the live server: without it the fuzzer meets the 30/minute calibration limit at once."""
    monkeypatch.setenv("CALIBRATION_THROTTLE_RATE", "100000/minute")


def run_schemathesis(
    url: str, token: str, examples: int, workdir: Path, ids: dict[str, int]
) -> subprocess.CompletedProcess[str]:
    with urllib.request.urlopen(f"{url}/api/v1/schema/?format=json", timeout=20) as answer:
        schema = json.load(answer)
    fuzzed = workdir / "schema.json"
    fuzzed.write_text(json.dumps(with_every_method(schema, ids)))
    return subprocess.run(
        [
            str(BIN / "st"),
            "run",
            str(fuzzed),
            "--url",
            url,
            "--header",
            f"Authorization: Token {token}",
            "--checks",
            CHECKS,
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--mode",
            "all",
            "--max-examples",
            str(examples),
            # One worker: hypothesis describes filters by parsing source, and CPython 3.11's parser is not
            # thread-safe ("AST constructor recursion depth mismatch" in a second worker thread).
            "--workers",
            "1",
            "--generation-database",
            "none",
            "--request-timeout",
            "30",
            "--suppress-health-check",
            "all",
            "--report",
            "json",
            "--report-dir",
            str(workdir),
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=workdir,
    )


def real_ids(user: Any, rec: Any, device: Any) -> dict[str, int]:
    """One object of each kind, the caller's own, for the `{id}` operations."""
    from advisor import services
    from advisor.models import CalibrationJob
    from advisor.probe import services as probe_services
    from advisor.probe.fit import probeable
    from advisor.probe.models import ProbeJob

    job = CalibrationJob.objects.create(
        owner=user, recommendation=rec, candidate=0, device=device, batch_sizes=[8], threads=[1],
        time_limit_seconds=60,
    )  # fmt: skip
    sample = probe_services.create_sample(owner=user, demo="iris")
    probe = ProbeJob.objects.create(
        owner=user, recommendation=rec, sample=sample, device=device, time_limit_seconds=60,
        shallow_candidate=0,  # as submit_probe picks it: the probe's code download has a candidate
    )  # fmt: skip
    # POST {id}/next/ on its own finished probe, of a recommendation the sample fits, whose verdict proposes
    # a candidate, so that it is served (202, then 200 for the same next probe): on the queued probe it
    # answers 400, and with random ids 404, which schemathesis reports as missing test data.
    fits = services.advise(owner=user, spec=IRIS)
    missed = ProbeJob.objects.create(
        owner=user, recommendation=fits, sample=sample, device=device, time_limit_seconds=60,
        shallow_candidate=0, status=ProbeJob.SUCCEEDED,
        verdict={"met": False, "text": "below its target", "next": {"candidate": probeable(fits)[-1]}},
    )  # fmt: skip
    return {
        "/api/v1/recommendations/": rec.pk,
        "/api/v1/calibrations/": job.pk,
        # a sample no probe uses, so that its DELETE is served (204) and not refused (409) while a queued
        # probe holds it, whichever operation schemathesis happens to run first
        "/api/v1/samples/": probe_services.create_sample(owner=user, demo="iris").pk,
        "/api/v1/probes/{id}/next/": missed.pk,
        "/api/v1/probes/": probe.pk,
    }


def fuzz_report(workdir: Path) -> dict[str, Any]:
    (path,) = workdir.glob("json-*.json")
    report: dict[str, Any] = json.loads(path.read_text())
    return report


def test_it_answers_every_operation_within_its_schema(
    live_server_url: str, user: Any, rec: Any, device: Any, tmp_path: Path
) -> None:
    token, _ = Token.objects.get_or_create(user=user)
    examples = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "15"))
    result = run_schemathesis(live_server_url, token.key, examples, tmp_path, real_ids(user, rec, device))
    report = fuzz_report(tmp_path)
    # Long generated URLs would push the explanation out of the message: each line is cut short.
    output = "\n".join(line[:300] for line in (result.stdout + result.stderr).splitlines())
    assert report["failures"] == [] and report["errors"] == [], output[-12000:]
    assert result.returncode == 0, output[-12000:]
    operations = report["operations"]
    assert operations["tested"] == operations["selected"] == operations["total"], operations
    assert operations["skipped"] == operations["errored"] == 0, operations
    assert report["test_cases"]["generated"] >= examples * operations["total"]
    assert report["warnings"]["missing_test_data"] == [], "every {id} operation met a real object"
    keep = os.environ.get("SCHEMATHESIS_REPORT")  # the committed figure's run keeps its report
    if keep:
        Path(keep).write_text(json.dumps(report, indent=1))


def test_schemathesis_sees_options_and_head_on_every_path(live_server_url: str) -> None:
    with urllib.request.urlopen(f"{live_server_url}/api/v1/schema/?format=json", timeout=20) as answer:
        schema = with_every_method(json.load(answer))
    for path, ops in schema["paths"].items():
        assert "options" in ops, path
        assert ("head" in ops) == ("get" in ops), path
    assert "links" in schema["paths"]["/api/v1/recommendations/"]["post"]["responses"]["201"]
