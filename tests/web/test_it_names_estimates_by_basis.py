"""A page that sets an estimate beside a measurement names the estimate by its basis (catalog, profiled,
predicted), never "the analytic estimate", and shows the basis's band and device."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor import profiles, services
from tests.engine.profiles import synthetic_profile
from tests.web.conftest import finished_job

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("profiled", "name"), [(True, "profiled estimate"), (False, "catalog estimate")])
def test_it_names_the_estimate_beside_a_measurement_by_its_basis(
    client_for: Client, user: Any, device: Any, tabular_spec: dict[str, Any], profiled: bool, name: str
) -> None:
    if profiled:
        profiles.store_profile(device=device, profile=synthetic_profile())
    rec = services.advise(owner=user, spec=tabular_spec, device=device if profiled else None)
    job = finished_job(rec, device)
    html = client_for.get(f"/calibrations/{job.pk}/").content.decode()
    prior = html.split('id="prior-estimate"')[1].split("</tr>")[0]
    assert f"{name.capitalize()} (batch 32)" in prior
    assert (f"{name.split()[0]} on {device.pk}" in prior) == profiled  # the band says where it comes from
    assert f"\u00d7</strong> the {name}." in html.split('id="measured-ratio"')[1][:200]
    page = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert f"the {name} at that batch size was" in page and f"\u00d7 the {name}" in page
    for text in (html, page):
        assert "analytic estimate" not in text and "estimated by the rules" not in text.lower()
