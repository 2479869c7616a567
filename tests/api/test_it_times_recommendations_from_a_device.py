"""POST recommendations/ with "device": its profile times the candidates (basis, expected_error)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from advisor import profiles
from advisor.engine.estimate import CATALOG_ERROR
from advisor.models import Device
from tests.engine.profiles import synthetic_profile

pytestmark = pytest.mark.django_db
URL = "/api/v1/recommendations/"


def test_it_times_a_recommendation_from_the_devices_profile(
    api: APIClient, device: Device, tabular_spec: dict[str, Any]
) -> None:
    profiles.store_profile(device=device, profile=synthetic_profile())
    response = api.post(URL, {**tabular_spec, "device": device.pk}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    for candidate in body["candidates"]:
        estimate = candidate["estimate"]
        assert estimate["basis"] == "profiled" and estimate["device"] == device.pk
        assert 0 < estimate["expected_error"] < CATALOG_ERROR
    assert "device" not in body["spec"]
    again = api.get(f"{URL}{body['id']}/").json()
    assert again["candidates"][0]["estimate"] == body["candidates"][0]["estimate"]


def test_it_uses_the_catalog_for_a_device_without_a_profile_and_without_a_device(
    api: APIClient, device: Device, tabular_spec: dict[str, Any]
) -> None:
    for body in ({**tabular_spec, "device": device.pk}, {**tabular_spec, "device": None}, tabular_spec):
        estimate = api.post(URL, body, format="json").json()["candidates"][0]["estimate"]
        assert estimate["basis"] == "catalog" and estimate["expected_error"] == CATALOG_ERROR


@pytest.mark.parametrize("bad", ["no-such-device", "cpu", 7, "", ["x"], "x" * 300])
def test_it_refuses_an_unknown_or_malformed_device_naming_the_field(
    api: APIClient, device: Device, tabular_spec: dict[str, Any], bad: Any
) -> None:
    response = api.post(URL, {**tabular_spec, "device": bad}, format="json")
    assert response.status_code == 400, response.content
    assert "device" in response.json()
