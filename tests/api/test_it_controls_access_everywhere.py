"""Access, one table over every endpoint and page that names an object: another user's recommendation,
calibration, probe or sample is a 404 (its existence is not disclosed) and stays untouched; anonymous is a 401
(API) or a redirect to log in (pages); staff see all. Lists show only one's own rows; the token page only
one's own token."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from advisor import services
from advisor.models import CalibrationJob, Device
from advisor.probe.models import DataSample, ProbeJob
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

# (method, URL with {rec} {cal} {probe} {sample}, API or page)
ROUTES = [
    ("get", "/api/v1/recommendations/{rec}/", "api"),
    ("get", "/api/v1/calibrations/{cal}/", "api"),
    ("post", "/api/v1/calibrations/{cal}/cancel/", "api"),
    ("get", "/api/v1/samples/{sample}/", "api"),
    ("delete", "/api/v1/samples/{sample}/", "api"),
    ("get", "/api/v1/probes/{probe}/", "api"),
    ("post", "/api/v1/probes/{probe}/cancel/", "api"),
    ("get", "/api/v1/recommendations/{rec}/candidates/0/code/", "api"),
    ("get", "/api/v1/probes/{probe}/code/", "api"),
    ("get", "/recommendations/{rec}/", "page"),
    ("post", "/recommendations/{rec}/calibrate/", "page"),
    ("get", "/calibrations/{cal}/", "page"),
    ("post", "/calibrations/{cal}/cancel/", "page"),
    ("get", "/recommendations/{rec}/probe/", "page"),
    ("post", "/recommendations/{rec}/probe/samples/", "page"),
    ("get", "/probes/{probe}/", "page"),
    ("post", "/probes/{probe}/cancel/", "page"),
    ("post", "/samples/{sample}/delete/", "page"),
]
LISTS = ["/api/v1/recommendations/", "/api/v1/calibrations/", "/api/v1/samples/", "/api/v1/probes/"]


@pytest.fixture
def bobs(other_user: Any, tabular_spec: dict[str, Any]) -> dict[str, int]:
    """One of each of bob's objects, a job of each kind still queued (so a cancel would change it)."""
    device = Device.objects.create(id="acl-cpu0", host="acl", kind="cpu", name="CPU", queue="device.acl-cpu0")
    rec = services.advise(owner=other_user, spec=tabular_spec)
    cal = CalibrationJob.objects.create(
        owner=other_user,
        recommendation=rec,
        candidate=0,
        device=device,
        batch_sizes=[8],
        threads=[1],
        time_limit_seconds=60,
    )
    sample = DataSample.objects.create(
        owner=other_user,
        name="bob's",
        format="csv",
        path="no.npz",
        examples=10,
        input_shape=[4],
        label_kind="class",
        outputs=2,
    )
    probe = ProbeJob.objects.create(
        owner=other_user, recommendation=rec, sample=sample, device=device, time_limit_seconds=60,
        shallow_candidate=0,
    )  # fmt: skip
    return {"rec": rec.pk, "cal": cal.pk, "sample": sample.pk, "probe": probe.pk}


def _untouched(ids: dict[str, int]) -> None:
    assert CalibrationJob.objects.get(pk=ids["cal"]).status == CalibrationJob.QUEUED
    assert ProbeJob.objects.get(pk=ids["probe"]).status == ProbeJob.QUEUED
    assert DataSample.objects.filter(pk=ids["sample"]).exists()


def _send(client: Client | APIClient, method: str, url: str) -> Any:
    return getattr(client, method)(url)


def _signed_in(user: Any, kind: str) -> Client | APIClient:
    """A token client for the API, a logged-in browser session for pages."""
    if kind == "api":
        return client_for(user)
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(("method", "route", "kind"), ROUTES)
def test_another_users_object_is_not_found(
    user: Any, bobs: dict[str, int], method: str, route: str, kind: str
) -> None:
    response = _send(_signed_in(user, kind), method, route.format(**bobs))
    assert response.status_code == 404, (route, response.status_code)
    _untouched(bobs)


@pytest.mark.parametrize(("method", "route", "kind"), ROUTES)
def test_anonymous_is_asked_to_authenticate(bobs: dict[str, int], method: str, route: str, kind: str) -> None:
    url = route.format(**bobs)
    response = _send(APIClient() if kind == "api" else Client(), method, url)
    if kind == "api":
        assert response.status_code == 401, (url, response.status_code)
    else:
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    _untouched(bobs)


@pytest.mark.parametrize(("method", "route", "kind"), [r for r in ROUTES if r[0] == "get"])
def test_staff_see_all(
    django_user_model: Any, bobs: dict[str, int], method: str, route: str, kind: str
) -> None:
    staff = django_user_model.objects.create_user(username="root", password="x" * 12, is_staff=True)
    response = _send(_signed_in(staff, kind), method, route.format(**bobs))
    assert response.status_code == 200, (route, response.status_code)


@pytest.mark.parametrize("url", LISTS)
def test_lists_hold_only_ones_own_rows_except_for_staff(
    user: Any, django_user_model: Any, bobs: dict[str, int], url: str
) -> None:
    staff = django_user_model.objects.create_user(username="root", password="x" * 12, is_staff=True)
    assert client_for(user).get(url).json()["results"] == []
    assert len(client_for(staff).get(url).json()["results"]) == 1


def test_the_token_page_shows_only_ones_own_token(user: Any, other_user: Any) -> None:
    from rest_framework.authtoken.models import Token

    bobs_key = Token.objects.get_or_create(user=other_user)[0].key
    client = Client()
    client.force_login(user)
    page = client.get("/account/token/").content.decode()
    assert Token.objects.get(user=user).key in page and bobs_key not in page
    client.post("/account/token/regenerate/")
    assert Token.objects.get(user=other_user).key == bobs_key
