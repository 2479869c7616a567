"""OPTIONS and HEAD on every API route, and URLs under /api/ that match no route: JSON answers, never a 500
(OPTIONS /api/v1/recommendations/ was one: DRF's metadata asked the stand-in serializer for its fields)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db

ROUTES = [
    "/api/v1/recommendations/",
    "/api/v1/recommendations/{rec}/",
    "/api/v1/calibrations/",
    "/api/v1/devices/",
    "/api/v1/catalog/gpus/",
    "/api/v1/samples/",
    "/api/v1/probes/",
]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("method", ["options", "head"])
def test_it_answers_options_and_head(api: Any, rec: Any, route: str, method: str) -> None:
    response = getattr(api, method)(route.format(rec=rec.pk))
    assert response.status_code == 200, response.content[:500]
    if method == "options":
        assert response["Content-Type"] == "application/json"
        assert response.json()["name"]


def test_it_describes_the_task_spec_on_options(api: Any) -> None:
    actions = api.options("/api/v1/recommendations/").json()["actions"]["POST"]
    assert {"task", "goal", "data", "hardware"} <= set(actions)


@pytest.mark.parametrize(
    "url", ["/api/v1/calibrations/%C2%84/", "/api/v1/probes/x/cancel/", "/api/v1/nothing-here/"]
)
def test_it_answers_unknown_api_urls_in_json(api: Any, url: str) -> None:
    response = api.get(url)
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


def test_it_keeps_the_html_not_found_page_outside_the_api(client: Any) -> None:
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
