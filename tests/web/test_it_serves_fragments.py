"""htmx fragments (requests with HX-Request): the wizard's live check and step swaps, the candidate panel,
the polled job status that stops polling (286) when the job is done, cancel, and history pages."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor.models import CalibrationJob, Recommendation
from tests.web.conftest import finished_job

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def _values(client: Client, **changes: str) -> dict[str, Any]:
    form = client.get("/").context["form"]
    values = {name: "" if form[name].value() is None else form[name].value() for name in form.fields}
    return {**values, **changes}


def test_it_checks_the_shown_fields_against_the_engine(client_for: Client) -> None:
    data = _values(client_for, step="data", task="vision", input_shape="28, 28")
    response = client_for.post("/wizard/check/", data, **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert '<p id="err-input_shape" class="field-errors" aria-live="polite" hx-swap-oob="innerHTML">' in html
    assert "vision needs [channels, height, width]" in html
    assert 'id="err-examples"' in html and 'id="err-cpu_cores"' not in html  # only the shown step's fields
    assert 'id="preview"' in html and "Fix the fields marked in Data (step 2)" in html


def test_it_previews_the_first_candidate_when_the_spec_is_valid(client_for: Client) -> None:
    data = _values(client_for, step="data", task="tabular", input_shape="16", outputs="3", examples="2000")
    response = client_for.post("/wizard/check/", data, **HX)
    html = response.content.decode()
    preview = response.context["preview"]
    assert preview is not None and preview["c"]["io"]["input_shape"] == [16]
    assert preview["title"] in html and 'class="badge analytic"' in html
    assert "<span></span>" not in html and "field-errors" in html


def test_it_swaps_only_the_wizard_between_steps(client_for: Client) -> None:
    response = client_for.post("/", _values(client_for, step="task", go="data"), **HX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="wizard"') and "<html" not in html
    assert 'name="examples"' in html and 'type="hidden" name="cpu_cores"' in html


def test_it_redirects_htmx_to_the_new_recommendation(client_for: Client, user: Any) -> None:
    response = client_for.post("/", _values(client_for, step="target", go="recommend"), **HX)
    rec = Recommendation.objects.get(owner=user)
    assert response.status_code == 200 and response["HX-Redirect"] == f"/recommendations/{rec.pk}/"


def test_it_serves_the_candidate_panel_alone(client_for: Client, rec: Any) -> None:
    response = client_for.get(f"/recommendations/{rec.pk}/?c=1", **HX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="candidate"') and "<html" not in html
    assert "Candidate 2:" in html and 'role="img"' in html


def test_it_keeps_polling_a_running_job_and_stops_when_it_finished(
    client_for: Client, rec: Any, device: Any
) -> None:
    job = finished_job(rec, device, status=CalibrationJob.RUNNING)
    running = client_for.get(f"/calibrations/{job.pk}/", **HX)
    html = running.content.decode()
    assert running.status_code == 200 and 'hx-trigger="every 1s"' in html and "<html" not in html
    assert "about" in html and "left" in html  # the ETA from progress 0.5
    CalibrationJob.objects.filter(pk=job.pk).update(status=CalibrationJob.SUCCEEDED)
    done = client_for.get(f"/calibrations/{job.pk}/", **HX)
    assert done.status_code == 286 and 'hx-trigger="every 1s"' not in done.content.decode()


def test_it_cancels_a_running_job_and_keeps_polling_until_the_worker_stops(
    client_for: Client, rec: Any, device: Any
) -> None:
    job = finished_job(rec, device, status=CalibrationJob.RUNNING)
    response = client_for.post(f"/calibrations/{job.pk}/cancel/", **HX)
    assert response.status_code == 200 and "Cancelling" in response.content.decode()
    assert CalibrationJob.objects.get(pk=job.pk).cancel_requested


def test_it_cancels_a_queued_job_at_once(client_for: Client, rec: Any, device: Any) -> None:
    job = CalibrationJob.objects.create(
        owner=rec.owner,
        recommendation=rec,
        device=device,
        time_limit_seconds=30,
        batch_sizes=[32],
        threads=[1],
    )
    response = client_for.post(f"/calibrations/{job.pk}/cancel/", **HX)
    assert response.status_code == 286 and "cancelled" in response.content.decode()
    finished = client_for.post(f"/calibrations/{job.pk}/cancel/", **HX)
    assert "already cancelled" in finished.content.decode()


def test_it_pages_history_as_a_fragment(client_for: Client, user: Any, rec: Any) -> None:
    Recommendation.objects.bulk_create(
        Recommendation(owner=user, spec=rec.spec, result=rec.result) for _ in range(30)
    )
    response = client_for.get("/history/?page=2", **HX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="list"') and "Page 2 of 2" in html
    assert 'hx-get="?page=1"' in html and 'href="?page=1"' in html


def test_it_compares_as_a_fragment(client_for: Client, rec: Any) -> None:
    response = client_for.get(f"/compare/?kind=candidates&a={rec.pk}:0&b={rec.pk}:1", **HX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="table"') and "Hidden sizes" in html


def test_it_sends_an_expired_htmx_session_to_the_login_page(rec: Any, device: Any) -> None:
    job = finished_job(rec, device, status=CalibrationJob.RUNNING)
    response = Client().get(
        f"/calibrations/{job.pk}/", HTTP_HX_CURRENT_URL=f"http://testserver/calibrations/{job.pk}/", **HX
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/accounts/login/?next=%2Fcalibrations%2F{job.pk}%2F"
    plain = Client().get(f"/calibrations/{job.pk}/")
    assert plain.status_code == 302 and plain["Location"].startswith("/accounts/login/")
