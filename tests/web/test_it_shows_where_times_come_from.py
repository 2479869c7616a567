"""Pages show each time's basis and error band: profiled on a device, or from the catalog's peaks."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor import profiles, services
from advisor.models import Device
from tests.engine.profiles import synthetic_profile

pytestmark = pytest.mark.django_db


def test_the_recommendation_page_says_profiled_on_the_device_with_its_band(
    client_for: Client, user: Any, device: Device, tabular_spec: dict[str, Any]
) -> None:
    profiles.store_profile(device=device, profile=synthetic_profile())
    rec = services.advise(owner=user, spec=tabular_spec, device=device)
    error = rec.result["candidates"][0]["estimate"]["expected_error"]
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert f"±{round(error * 100)}%, profiled on {device.pk}" in html
    assert "no device profile" not in html


def test_the_recommendation_page_says_when_the_catalog_times_it(
    client_for: Client, user: Any, tabular_spec: dict[str, Any]
) -> None:
    rec = services.advise(owner=user, spec=tabular_spec)
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert "from catalog peaks (no device profile)" in html


def test_the_wizard_preview_uses_the_preselected_live_device(client_for: Client, device: Device) -> None:
    profiles.store_profile(device=device, profile=synthetic_profile())
    page = client_for.get("/")
    preview = page.context["preview"]
    assert preview["estimate"]["basis"] == "profiled" and preview["estimate"]["device"] == device.pk
    assert f"profiled on {device.pk}" in page.content.decode()
