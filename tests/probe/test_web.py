"""The probe pages: add a sample and start a probe from a recommendation; the probe page and its polling."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from advisor.probe.models import DataSample, ProbeJob

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _succeeded(rec: Any, device: Any, **fields: Any) -> ProbeJob:
    """A probe of `rec` as its worker leaves it, written directly: these pages only read the row."""
    return ProbeJob.objects.create(
        owner=rec.owner,
        recommendation=rec,
        device=device,
        status=ProbeJob.SUCCEEDED,
        **{"time_limit_seconds": 30, **fields},
    )


def test_it_adds_a_demo_sample_and_starts_a_probe(
    browser: Client, iris_rec: Any, device: Any, samples_dir: Any
) -> None:
    page = browser.get(f"/recommendations/{iris_rec.pk}/probe/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Shallow: candidate 1, Shallow feed-forward network (FFN)" in html and "net.shallow.first" in html
    assert "150 examples) — fits this task" in html  # iris, among the bundled data sets
    added = browser.post(f"/recommendations/{iris_rec.pk}/probe/samples/", {"demo": "iris"})
    sample = DataSample.objects.get()
    assert added.status_code == 302 and added["Location"].endswith(f"?sample={sample.pk}")
    started = browser.post(
        f"/recommendations/{iris_rec.pk}/probe/",
        {"sample": sample.pk, "device": device.id, "time_limit_seconds": 30},
    )
    job = ProbeJob.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/probes/{job.pk}/"
    shown = browser.get(f"/probes/{job.pk}/")
    assert "queued" in shown.content.decode()
    assert browser.get(f"/probes/{job.pk}/", HTTP_HX_REQUEST="true").status_code == 200  # keeps polling


@pytest.mark.parametrize(
    ("upload", "words"),
    [
        (("iris.csv", b""), "the file is empty"),
        (("x.exe", b"MZ"), "unknown file type"),
        (("four.csv", b"a,y\n" + b"".join(b"%d,k%d\n" % (i, i % 4) for i in range(40))), "4 classes"),
    ],
)
def test_it_shows_why_a_sample_was_refused(
    browser: Client, iris_rec: Any, samples_dir: Any, upload: tuple[str, bytes], words: str
) -> None:
    name, data = upload
    answer = browser.post(
        f"/recommendations/{iris_rec.pk}/probe/samples/",
        {"file": SimpleUploadedFile(name, data), "label_column": "y"},
    )
    assert answer.status_code == 400
    assert words in answer.content.decode()
    assert not DataSample.objects.exists()


def test_it_refuses_a_probe_form_naming_the_problem(
    browser: Client, digits_rec: Any, device: Any, samples_dir: Any
) -> None:
    browser.post(f"/recommendations/{digits_rec.pk}/probe/samples/", {"demo": "digits"})
    sample = DataSample.objects.get()
    answer = browser.post(
        f"/recommendations/{digits_rec.pk}/probe/",
        {"sample": sample.pk, "device": device.id, "time_limit_seconds": 100_000},
    )
    assert answer.status_code == 400 and "less than or equal to" in answer.content.decode()
    assert not ProbeJob.objects.exists()


def test_it_draws_the_verdict_and_the_curve_of_a_finished_probe(
    browser: Client, user: Any, iris_rec: Any, device: Any
) -> None:
    results = {
        "baseline": {
            "model": "logistic regression",
            "metric": "accuracy",
            "score": 0.95,
            "train_score": 0.97,
        },
        "shallow": {
            "family": "ffn",
            "score": 0.93,
            "train_score": 0.95,
            "best_epoch": 2,
            "stopped": "plateau",
            "epochs": [{"epoch": 1, "val": 0.8}, {"epoch": 2, "val": 0.93, "test": 0.93}],
        },
        "curve": {
            "family": "ffn",  # the network the curve was measured on, as the worker saves it
            "method": "power_law",
            "examples": 120,
            "estimate": 0.96,
            "low": 0.94,
            "high": 0.98,
            "interval": 0.9,
            "points": [
                {"examples": 20, "score": 0.8},
                {"examples": 50, "score": 0.9},
                {"examples": 90, "score": 0.93},
            ],
            "line": [{"examples": 20, "score": 0.81}, {"examples": 120, "score": 0.96}],
        },
    }
    verdict = {"text": "shallow FFN reaches 0.93 (target 0.90) — deep not needed", "notes": [], "reasons": []}
    job = _succeeded(iris_rec, device, results=results, verdict=verdict)
    html = browser.get(f"/probes/{job.pk}/").content.decode()
    assert "deep not needed" in html
    assert html.count('<figure class="plot">') == 2  # the learning curve, the scores per epoch
    assert html.count('r="4.5"') == 3 and html.count("<polyline") == 2  # the curve's points; fitted, epochs
    assert "measured (FFN)" in html and "target 0.9" in html  # which network; the target in the legend
    assert 'class="interval"' in html  # the expected score at full size, with its interval
    assert browser.get(f"/probes/{job.pk}/", HTTP_HX_REQUEST="true").status_code == 286


@pytest.mark.parametrize(
    ("met", "css"), [(True, "status succeeded"), (False, "status failed"), (None, 'class="status "')]
)
def test_it_colours_the_verdict_as_the_target_was_met_or_missed(
    browser: Client, user: Any, iris_rec: Any, device: Any, met: bool | None, css: str
) -> None:
    text = "neither reaches the target 0.97 on the sample: shallow 0.967, CNN 0.969"
    job = _succeeded(
        iris_rec, device, results={}, verdict={"text": text, "met": met, "notes": [], "reasons": []}
    )
    html = browser.get(f"/probes/{job.pk}/").content.decode()
    verdict = html[html.index('id="verdict"') :]
    assert text in verdict
    assert css in verdict.split(text)[0]  # a miss is never drawn in the success colour
    if met is not True:
        assert "succeeded" not in verdict.split(text)[0]


@pytest.mark.parametrize(
    ("time_to_target", "shown"),
    [
        (
            {
                "reached": False,
                "forecast": {
                    "method": "size_curve",
                    "reached": True,
                    "certain": False,
                    "epochs": 18,
                    "seconds_to_target": 4.0,
                    "basis": "measured",
                    "reason": "the size curve says 0.986",
                },
            },
            [
                "Predicted at full size (a best guess): the target after about 18 epochs",
                "the size curve says 0.986",
            ],
        ),
        (
            {
                "reached": False,
                "forecast": {
                    "method": "size_curve",
                    "reached": False,
                    "certain": True,
                    "reason": "below 0.98",
                },
            },
            ["Predicted at full size: the target is not reached: below 0.98"],
        ),
        (
            {"reached": False, "forecast": {"method": "declined", "reached": None, "reason": "30 examples"}},
            ["No time to the target is predicted: 30 examples"],
        ),
        (
            {
                "reached": True,
                "role": "shallow",
                "epoch": 3,
                "updates": 6,
                "epochs_at_full_size": 2,
                "full_size_examples": 120,
                "caveat": "the held-out split has 30 examples",
            },
            ["Take the epoch count loosely: the held-out split has 30 examples"],
        ),
    ],
)
def test_it_says_the_time_to_target_forecast_or_why_there_is_none(
    browser: Client, iris_rec: Any, device: Any, time_to_target: dict[str, Any], shown: list[str]
) -> None:
    verdict = {"text": "shallow FFN 0.95", "notes": [], "reasons": [], "time_to_target": time_to_target}
    job = _succeeded(iris_rec, device, results={}, verdict=verdict)
    html = browser.get(f"/probes/{job.pk}/").content.decode()
    for text in shown:
        assert text in html
    assert "{%" not in html and "{{" not in html


def test_it_hides_others_probes_and_samples(
    browser: Client, other_user: Any, iris_rec: Any, device: Any
) -> None:
    from advisor import services

    theirs = services.advise(owner=other_user, spec=iris_rec.spec)
    job = ProbeJob.objects.create(
        owner=other_user, recommendation=theirs, device=device, time_limit_seconds=5
    )
    assert browser.get(f"/probes/{job.pk}/").status_code == 404
    assert browser.get(f"/recommendations/{theirs.pk}/probe/").status_code == 404
    assert browser.get("/probes/99999999999999999999999/").status_code == 404


def test_it_links_the_probe_from_the_recommendation_page(
    browser: Client, iris_rec: Any, user: Any, device: Any
) -> None:
    job = _succeeded(
        iris_rec,
        device,
        time_limit_seconds=5,
        verdict={"text": "shallow FFN reaches 0.97 (target 0.90) — deep not needed"},
    )
    html = browser.get(f"/recommendations/{iris_rec.pk}/").content.decode()
    assert f'href="/recommendations/{iris_rec.pk}/probe/"' in html
    assert f'href="/probes/{job.pk}/"' in html and "deep not needed" in html


def test_it_sends_an_expired_htmx_session_to_the_login_page(
    user: Any, iris_rec: Any, device: Any, samples_dir: Any
) -> None:
    from advisor.probe import services

    sample = services.create_sample(owner=user, demo="iris")
    job = services.submit_probe(owner=user, recommendation=iris_rec, sample=sample, device=device)
    response = Client().get(
        f"/probes/{job.pk}/",
        HTTP_HX_CURRENT_URL=f"http://testserver/probes/{job.pk}/",
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/accounts/login/?next=%2Fprobes%2F{job.pk}%2F"
    plain = Client().get(f"/probes/{job.pk}/")
    assert plain.status_code == 302 and plain["Location"].startswith("/accounts/login/")
