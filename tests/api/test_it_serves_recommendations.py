"""POST/GET recommendations: the engine's answer, its own error messages, ownership, pagination, auth."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from advisor import engine
from advisor.models import CalibrationJob, Recommendation

pytestmark = pytest.mark.django_db

URL = "/api/v1/recommendations/"


def _engine_errors(spec: Any) -> dict[str, list[str]]:
    with pytest.raises(engine.SpecError) as caught:
        engine.recommend(spec)
    return caught.value.errors


def test_it_creates_a_recommendation_with_the_contract_fields(api: APIClient, tabular_spec: Any) -> None:
    response = api.post(URL, tabular_spec, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert response["Location"] == f"{URL}{body['id']}/"
    assert set(body) >= {"id", "spec", "candidates", "hardware_plan", "dataflow", "reasons"}
    assert body["spec"] == engine.normalise(tabular_spec)
    assert body["candidates"] == engine.recommend(tabular_spec)["candidates"]
    assert Recommendation.objects.get(pk=body["id"]).owner.username == "ada"
    for candidate in body["candidates"]:  # every time with its 90% interval, beside expected_error
        estimate = candidate["estimate"]
        assert set(estimate["interval"]) == {"seconds_per_batch", "seconds_per_epoch", "seconds_to_train"}
        assert "expected_error" in estimate
        for time, (low, high) in estimate["interval"].items():
            assert low < estimate[time] < high


def test_it_records_the_engine_version_that_made_the_advice(
    api: APIClient, tabular_spec: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each recommendation keeps the version it was made under: advice from before a rule changed (here, a
    version bumped after the first POST) still says the older one, and rows from before versions say 0."""
    first = api.post(URL, tabular_spec, format="json").json()
    assert first["engine_version"] == engine.ENGINE_VERSION >= 1
    monkeypatch.setattr(engine, "ENGINE_VERSION", engine.ENGINE_VERSION + 1)
    second = api.post(URL, tabular_spec, format="json").json()
    assert second["engine_version"] == first["engine_version"] + 1
    assert api.get(f"{URL}{first['id']}/").json()["engine_version"] == first["engine_version"]
    listed = {r["id"]: r["engine_version"] for r in api.get(URL).json()["results"]}
    assert listed == {first["id"]: first["engine_version"], second["id"]: second["engine_version"]}
    Recommendation.objects.filter(pk=first["id"]).update(engine_version=0)  # as the migration leaves old rows
    assert api.get(f"{URL}{first['id']}/").json()["engine_version"] == 0


def _set(spec: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    *parents, leaf = path.split(".")
    node = spec
    for name in parents:
        node = node[name]
    if value is _DROP:
        del node[leaf]
    else:
        node[leaf] = value
    return spec


_DROP = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("data.input_shape", [1, 28, 28]),
        ("hardware.gpu", "no-such-gpu"),
        ("task", _DROP),
        ("task", "poetry"),
        ("data.examples", -5),
        ("data.examples", "many"),
        ("hardware", _DROP),
        ("hardware.link", "carrier-pigeon"),
        ("target.accuracy", 1.5),
        ("colour", "blue"),
    ],
)
def test_it_answers_a_bad_spec_with_the_engines_own_messages(
    api: APIClient, tabular_spec: Any, path: str, value: Any
) -> None:
    bad = _set(tabular_spec, path, value)
    response = api.post(URL, bad, format="json")
    assert response.status_code == 400
    assert response.json() == _engine_errors(bad)
    assert path in response.json()
    assert not Recommendation.objects.exists()


@pytest.mark.parametrize("body", [[1, 2], "vision", 7, None, {}])
def test_it_answers_a_body_that_is_not_a_task_with_400(api: APIClient, body: Any) -> None:
    response = api.generic("POST", URL, json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert response.json() == _engine_errors(body)


@pytest.mark.parametrize(
    ("content", "content_type", "expected"),
    [
        (b'{"task": "vision", ', "application/json", 400),
        (b"task=vision", "application/x-www-form-urlencoded", 415),
        (b"\xff\xfe", "application/json", 400),
        (b"[" * 100_000, "application/json", 400),
        (b'{"task": ' + b"[" * 5000 + b"]" * 5000 + b"}", "application/json", 400),
    ],
)
def test_it_refuses_malformed_bodies_without_a_500(
    api: APIClient, content: bytes, content_type: str, expected: int
) -> None:
    response = api.generic("POST", URL, content, content_type=content_type)
    assert response.status_code == expected
    assert "detail" in response.json()


def test_it_shows_a_recommendation_to_its_owner_only(
    api: APIClient, other_api: APIClient, staff_api: APIClient, tabular_spec: Any
) -> None:
    rec_id = api.post(URL, tabular_spec, format="json").json()["id"]
    assert api.get(f"{URL}{rec_id}/").json()["id"] == rec_id
    assert other_api.get(f"{URL}{rec_id}/").status_code == 404
    assert staff_api.get(f"{URL}{rec_id}/").status_code == 200


@pytest.mark.parametrize("pk", ["999999", "99999999999999999", "9" * 40, "abc", "-1"])
def test_it_answers_404_for_ids_that_do_not_exist(api: APIClient, pk: str) -> None:
    response = api.get(f"{URL}{pk}/")
    assert response.status_code == 404


def test_it_lists_only_my_recommendations_page_by_page(
    api: APIClient, other_api: APIClient, staff_api: APIClient, tabular_spec: Any
) -> None:
    mine = [api.post(URL, tabular_spec, format="json").json()["id"] for _ in range(3)]
    other_api.post(URL, tabular_spec, format="json")
    first = api.get(URL, {"page_size": 2}).json()
    assert first["count"] == 3 and len(first["results"]) == 2 and first["next"]
    second = api.get(first["next"]).json()
    shown = [r["id"] for r in first["results"] + second["results"]]
    assert shown == sorted(mine, reverse=True)
    assert staff_api.get(URL).json()["count"] == 4
    assert api.get(URL, {"page": 99}).status_code == 404


def test_it_merges_a_finished_calibrations_measurement(
    api: APIClient, rec: Recommendation, device: Any
) -> None:
    measured = {
        "seconds_per_batch": 0.5,
        "seconds_per_epoch": 16.0,
        "seconds_to_train": 1600.0,
        "basis": "measured",
    }
    CalibrationJob.objects.create(
        owner=rec.owner,
        recommendation=rec,
        device=device,
        time_limit_seconds=60,
        status="succeeded",
        estimate=measured,
        finished_at=timezone.now(),
    )
    shown = api.get(f"{URL}{rec.pk}/").json()["candidates"][0]["estimate"]
    assert shown["basis"] == "measured" and shown["seconds_per_batch"] == 0.5


@pytest.mark.parametrize("method", ["get", "post"])
def test_it_refuses_anonymous_clients(method: str, tabular_spec: Any) -> None:
    response = getattr(APIClient(), method)(URL, tabular_spec, format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")


def test_it_accepts_a_session_login(user: Any, tabular_spec: Any) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(
        user
    )  # a session as the login form makes it (that form: tests/web/test_it_locks_out_guessing.py)
    assert client.get(URL).status_code == 200
    # A session is a browser's credential: unsafe methods need the CSRF token too.
    assert client.post(URL, tabular_spec, format="json").status_code == 403


def test_it_refuses_a_wrong_token(tabular_spec: Any) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get(URL).status_code == 401
