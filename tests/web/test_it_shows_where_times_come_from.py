"""Pages show each time's basis and its 90% interval: profiled on a device, or from the catalog's peaks;
never a ±% band."""

from __future__ import annotations

import pickle
import re
from typing import Any

import pytest
from django.test import Client

from advisor import profiles, services
from advisor.engine.units import interval_text
from advisor.models import Device
from tests.engine.profiles import synthetic_profile

pytestmark = pytest.mark.django_db


def test_the_recommendation_page_says_profiled_on_the_device_with_its_band(
    client_for: Client, user: Any, device: Device, tabular_spec: dict[str, Any]
) -> None:
    profiles.store_profile(device=device, profile=synthetic_profile())
    rec = services.advise(owner=user, spec=tabular_spec, device=device)
    estimate = rec.result["candidates"][0]["estimate"]
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert f"90%: \N{MULTIPLICATION SIGN}0.74 to \N{MULTIPLICATION SIGN}1.5, profiled on {device.pk}" in html
    low, high = estimate["interval"]["seconds_to_train"]
    assert f"({interval_text(low, high)})" in html
    assert "no device profile" not in html and re.search(r"±\d+%", html) is None


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


def test_the_page_says_why_the_learned_correction_is_not_used(
    client_for: Client, user: Any, device: Device, tabular_spec: dict[str, Any]
) -> None:
    """A correction whose cross-validated error was higher than the profile's own: the profile times it,
    and the page says so with both errors."""
    from advisor.engine.learned import FEATURES
    from advisor.models import TimeModel

    profiles.store_profile(device=device, profile=synthetic_profile())
    validation = {
        "rows": 12,
        "networks": 3,
        "median_error": 0.4,
        "p90_error": 0.9,
        "profile_median_error": 0.18,
        "profile_p90_error": 0.5,
        "ratio_low": 0.5,
        "ratio_high": 2.5,
        "used": False,
    }
    model = _fitted(FEATURES)
    TimeModel.objects.create(
        device=device, version=1, rows=12, networks=3, expected_error=0.9, median_error=0.4,
        validation=validation, fitted=pickle.dumps(model),
    )  # fmt: skip
    rec = services.advise(owner=user, spec=tabular_spec, device=device)
    estimate = rec.result["candidates"][0]["estimate"]
    assert estimate["basis"] == "profiled" and estimate["correction"]["used"] is False
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert (
        "The profile times this, not the learned correction: on 12 reliable measurements of 3 networks, each "
        "network left out, the correction&#x27;s median error 40% against the profile&#x27;s 18%." in html
    )


def _fitted(features: int) -> Any:
    from advisor.engine.learned import fit

    return fit([[float(-i)] * features for i in range(1, 9)], [1.0 + i / 10 for i in range(8)])
