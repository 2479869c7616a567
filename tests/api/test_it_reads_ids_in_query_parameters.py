"""`?recommendation=` on the calibration and probe lists is read by advisor.ids: an id filters, anything else
(0, "²", a sign, 19 digits) is a 400 that says what the parameter must be."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from advisor.models import Recommendation

pytestmark = pytest.mark.django_db
LISTS = ["/api/v1/calibrations/", "/api/v1/probes/"]


@pytest.mark.parametrize("url", LISTS)
@pytest.mark.parametrize("garbage", ["0", "²", "٣", "-1", "+1", "1.0", "9" * 19])
def test_it_refuses_what_is_not_an_id(api: APIClient, url: str, garbage: str) -> None:
    response = api.get(url, {"recommendation": garbage})
    assert response.status_code == 400
    assert response.json() == {"recommendation": ["must be a recommendation's id"]}


@pytest.mark.parametrize("url", LISTS)
def test_it_accepts_ids_with_leading_zeros(api: APIClient, rec: Recommendation, url: str) -> None:
    for asked in (str(rec.pk), f"00{rec.pk}", "", "9" * 18):
        assert api.get(url, {"recommendation": asked}).status_code == 200
