"""GET devices/, catalog/gpus/, the generated OpenAPI schema and its docs pages (local static files only)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from rest_framework.test import APIClient

from advisor import contract, engine
from advisor.api import serializers, spec
from advisor.models import Device

pytestmark = pytest.mark.django_db


def test_it_lists_the_devices_of_live_workers(api: APIClient, device: Device, offline_device: Device) -> None:
    live = api.get("/api/v1/devices/")
    assert live.status_code == 200
    (shown,) = live.json()
    assert shown["id"] == device.pk and shown["online"] is True
    assert (shown["kind"], shown["cores"], shown["queue"]) == ("cpu", 2, device.queue)
    everything = api.get("/api/v1/devices/", {"include_offline": "true"}).json()
    assert {d["id"]: d["online"] for d in everything} == {device.pk: True, offline_device.pk: False}


def test_it_refuses_a_bad_device_filter(api: APIClient) -> None:
    response = api.get("/api/v1/devices/", {"include_offline": "maybe"})
    assert response.status_code == 400 and "include_offline" in response.json()


def test_it_serves_the_engines_gpu_catalog(api: APIClient) -> None:
    response = api.get("/api/v1/catalog/gpus/")
    assert response.status_code == 200
    assert response.json() == engine.gpu_catalog()
    assert all({"id", "name", "memory_gb"} <= set(gpu) for gpu in response.json())


@pytest.mark.parametrize("path", ["/api/v1/devices/", "/api/v1/catalog/gpus/", "/api/v1/calibrations/"])
def test_it_needs_authentication_everywhere(path: str) -> None:
    assert APIClient().get(path).status_code == 401


CONTRACT_OPERATIONS = [
    ("post", "/api/v1/recommendations/"),
    ("get", "/api/v1/recommendations/"),
    ("get", "/api/v1/recommendations/{id}/"),
    ("post", "/api/v1/calibrations/"),
    ("get", "/api/v1/calibrations/"),
    ("get", "/api/v1/calibrations/{id}/"),
    ("post", "/api/v1/calibrations/{id}/cancel/"),
    ("get", "/api/v1/devices/"),
    ("get", "/api/v1/catalog/gpus/"),
]


def _schema() -> dict[str, Any]:
    response = APIClient().get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return dict(response.json())


def test_it_generates_an_openapi_3_schema_of_every_contract_endpoint() -> None:
    schema = _schema()
    assert schema["openapi"].startswith("3.")
    operations = {(method, path) for path, item in schema["paths"].items() for method in item}
    assert set(CONTRACT_OPERATIONS) <= operations
    assert {"tokenAuth", "cookieAuth"} <= set(schema["components"]["securitySchemes"])


def test_it_documents_the_error_answers_and_the_idempotency_header() -> None:
    submit = _schema()["paths"]["/api/v1/calibrations/"]["post"]
    assert {"202", "400", "409", "429", "503"} <= set(submit["responses"])
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in submit["parameters"])
    cancel = _schema()["paths"]["/api/v1/calibrations/{id}/cancel/"]["post"]
    assert {"200", "404", "409"} <= set(cancel["responses"])


def test_it_documents_the_taskspec_with_the_engines_vocabularies() -> None:
    schema = _schema()
    components = schema["components"]["schemas"]
    body = schema["paths"]["/api/v1/recommendations/"]["post"]["requestBody"]["content"]["application/json"]
    spec = components[body["schema"]["$ref"].rsplit("/", 1)[-1]]
    assert set(spec["required"]) == {"task", "data", "hardware"}
    assert "device" in spec["properties"]  # optional: the device whose profile times the answer
    enums = {tuple(c.get("enum", ())) for c in components.values()}
    assert tuple(engine.spec.TASKS) in enums and tuple(engine.spec.STORAGES) in enums


BODIES = [
    ("/api/v1/recommendations/", "RecommendationRequest"),
    ("/api/v1/calibrations/", "CalibrationRequest"),
    ("/api/v1/probes/", "ProbeRequest"),
]


@pytest.mark.parametrize(("path", "component"), BODIES)
def test_it_names_request_bodies_as_the_contract_does(path: str, component: str) -> None:
    schema = _schema()
    body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": f"#/components/schemas/{component}"}
    assert not [name for name in schema["components"]["schemas"] if name.endswith("RequestRequest")]


def _ref(schema: dict[str, Any]) -> str:
    """The component a property names, directly or as the one non-null choice of a nullable one."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    (named,) = [choice for choice in schema.get("oneOf", schema.get("allOf", [])) if "$ref" in choice]
    return _ref(named)


def test_it_types_every_estimate_as_the_contracts_estimate() -> None:
    components = _schema()["components"]["schemas"]
    assert _ref(components["Candidate"]["properties"]["estimate"]) == "Estimate"
    assert _ref(components["Calibration"]["properties"]["estimate"]) == "Estimate"
    estimate = components["Estimate"]["properties"]
    assert (_ref(estimate["interval"]), _ref(estimate["measured_at"])) == ("Interval", "MeasuredAt")
    messages = {"type": "array", "items": {"type": "string"}}
    assert messages in components["FieldErrors"]["additionalProperties"]["oneOf"]


CONTRACT_COMPONENTS = [
    (contract.Layer, spec.LayerSerializer),
    (contract.Reason, spec.ReasonSerializer),
    (contract.Io, spec.IoSerializer),
    (contract.Training, spec.TrainingSerializer),
    (contract.MemoryBytes, spec.MemoryBytesSerializer),
    (contract.Interval, spec.IntervalSerializer),
    (contract.CorrectionBasis, spec.CorrectionBasisSerializer),
    (contract.Scaling, spec.ScalingSerializer),
    (contract.MeasuredAt, spec.MeasuredAtSerializer),
    (contract.Estimate, spec.EstimateSerializer),
    (contract.ProbeEstimate, spec.ProbeEstimateSerializer),
    (contract.Candidate, spec.CandidateSerializer),
    (contract.HardwarePlan, spec.HardwarePlanSerializer),
    (contract.PlausibilityWarning, spec.PlausibilityWarningSerializer),
    (contract.Unreliability, serializers.UnreliabilitySerializer),
    (contract.Measurement, serializers.MeasurementSerializer),
]


def _required(typed: Any) -> set[str]:
    """The keys a TypedDict requires. Its __required_keys__ would list them all: the contract's annotations
    are strings (`from __future__ import annotations`), which Python 3.11 does not read NotRequired from."""
    written = {key: str(getattr(a, "__forward_arg__", a)) for key, a in typed.__annotations__.items()}
    return {key for key, annotation in written.items() if not annotation.startswith("NotRequired[")}


@pytest.mark.parametrize(("typed", "serializer"), CONTRACT_COMPONENTS, ids=lambda t: t.__name__)
def test_it_documents_each_contract_type_as_declared(typed: Any, serializer: Any) -> None:
    """A component has the contract type's name and fields, and requires what the type requires."""
    components = _schema()["components"]["schemas"]
    documented = components[typed.__name__]
    assert set(documented["properties"]) == set(typed.__annotations__)
    assert set(documented.get("required", [])) == _required(typed)
    assert set(serializer().fields) == set(typed.__annotations__)


@pytest.mark.parametrize("page", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_it_serves_docs_pages_from_local_static_files(page: str) -> None:
    response = APIClient().get(page)
    assert response.status_code == 200
    html = response.content.decode()
    assert "cdn" not in html.lower() and not re.search(r"""src=["']https?://""", html)
    scripts = re.findall(r"""src=["'](/[^"']+)["']""", html)
    assert scripts
    for url in scripts:
        if url.startswith("/static/"):
            assert finders.find(url.removeprefix("/static/")), f"{url} is not a local static file"
        else:  # ReDoc's bundle, served by the app with its logo pointed at a local file (issue 27)
            bundle = APIClient().get(url)
            assert bundle.status_code == 200 and b"cdn.redoc.ly" not in bundle.content
            assert b"/static/vendor/redoc-logo-mini.svg" in bundle.content


def test_it_gives_the_unreliability_codes_of_one_list_in_the_schema_and_the_contract_page() -> None:
    components = _schema()["components"]["schemas"]
    enums = {tuple(c.get("enum", ())) for c in components.values()}
    assert contract.UNRELIABILITY_CODES in enums
    page = (Path(__file__).resolve().parents[2] / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    assert all(f"`{code}`" in page for code in contract.UNRELIABILITY_CODES)
