"""The wizard shows the engine's plausibility warnings as the user types (the live check's preview), and the
API returns them with the recommendation."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.web.test_it_serves_fragments import HX, _values

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"cpu_cores": "2", "cpu_threads": "2", "ram_gb": "0.00001"}, "hardware.ram_gb"),
        ({"time_budget_hours": "0.0000001"}, "target.time_budget_hours"),
    ],
)
def test_it_shows_warnings_as_the_user_types(client_for: Client, changes: dict[str, str], field: str) -> None:
    data = _values(client_for, step="hardware", task="tabular", input_shape="16", outputs="3", **changes)
    html = client_for.post("/wizard/check/", data, **HX).content.decode()
    assert 'class="notice plausibility"' in html and f"<strong>{field}</strong>" in html


def test_it_shows_no_warning_box_for_plausible_hardware(client_for: Client) -> None:
    data = _values(client_for, step="hardware", task="tabular", input_shape="16", outputs="3")
    response = client_for.post("/wizard/check/", data, **HX)
    assert response.context["preview"] is not None
    assert "plausibility" not in response.content.decode()


def test_the_api_returns_the_warnings(api: Any, tabular_spec: dict[str, Any]) -> None:
    tabular_spec["hardware"]["ram_gb"] = 0.00001
    body = api.post("/api/v1/recommendations/", tabular_spec, format="json").json()
    assert [w["field"] for w in body["warnings"]] == ["hardware.ram_gb"]
    again = api.get(f"/api/v1/recommendations/{body['id']}/").json()
    assert again["warnings"] == body["warnings"]
