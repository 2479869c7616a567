"""The probe's pages after issue 25: the verdict's next step with its button (a plain form, htmx-enhanced),
the chain of probes on the probe page, in the history and on the recommendation page, the spread over repeated
splits, and which candidate the probes now expect to reach the target first."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor.probe import services
from advisor.probe.models import DataSample, ProbeJob

pytestmark = pytest.mark.django_db

NEXT = {
    "diagnosis": "over-fitting",
    "text": "The CNN scores 1.00 on its training split but 0.93 held out, and its learning curve is flat.",
    "advice": "regularisation, a smaller network or more data",
    "from_candidate": 0,
    "candidate": 1,
    "change": None,
    "reason": "probe candidate 2 (shallow FFN, 8,410 parameters) next: fewer parameters than this one's",
}


@pytest.fixture
def browser(client_for: Client) -> Client:
    return client_for  # tests/conftest.py's, signed in as `user`


@pytest.fixture
def sample(user: Any, samples_dir: Any, digits_rec: Any) -> DataSample:
    return services.create_sample(owner=user, demo="digits", recommendation=digits_rec)


def probe(rec: Any, sample: DataSample, device: Any, **fields: Any) -> ProbeJob:
    """A probe as its worker leaves it, written directly: these pages only read the row."""
    values: dict[str, Any] = {"status": ProbeJob.SUCCEEDED, "time_limit_seconds": 30, "deep_candidate": 0}
    return ProbeJob.objects.create(
        owner=rec.owner, recommendation=rec, sample=sample, device=device, **{**values, **fields}
    )


def test_it_offers_the_next_step_and_shows_the_chain_it_makes(
    browser: Client, digits_rec: Any, sample: DataSample, device: Any
) -> None:
    verdict = {"text": "CNN scores 0.93, below the target 0.95", "met": False, "chosen": "deep", "next": NEXT}
    first = probe(digits_rec, sample, device, verdict=verdict)
    html = browser.get(f"/probes/{first.pk}/").content.decode()
    assert 'id="next-step"' in html and "Next step: regularisation, a smaller network or more data" in html
    assert NEXT["text"] in html and "Probe candidate 2 (shallow FFN" in html
    assert f'action="/probes/{first.pk}/next/"' in html and f'hx-post="/probes/{first.pk}/next/"' in html
    answer = browser.post(f"/probes/{first.pk}/next/")  # the plain form: no JavaScript needed
    second = ProbeJob.objects.exclude(pk=first.pk).get()
    assert answer.status_code == 302 and answer["Location"] == f"/probes/{second.pk}/"
    assert second.previous_id == first.pk and second.status == ProbeJob.QUEUED
    htmx = browser.post(f"/probes/{first.pk}/next/", HTTP_HX_REQUEST="true")  # htmx: the same probe, once
    assert htmx["HX-Redirect"] == f"/probes/{second.pk}/" and ProbeJob.objects.count() == 2
    shown = browser.get(f"/probes/{second.pk}/").content.decode()
    assert 'id="probe-chain"' in shown and f'<a href="/probes/{first.pk}/">#{first.pk}</a>' in shown
    assert f'<strong aria-current="page">#{second.pk}</strong>' in shown
    before = browser.get(f"/probes/{first.pk}/").content.decode()
    assert f'This next step runs as <a href="/probes/{second.pk}/">probe #{second.pk}</a>' in before
    assert 'id="probe-next"' not in before  # the button is gone once the step runs
    history = browser.get("/history/probes/").content.decode()
    assert f'next step of <a href="/probes/{first.pk}/">#{first.pk}</a>' in history
    rec_page = browser.get(f"/recommendations/{digits_rec.pk}/").content.decode()
    assert f"Probe #{second.pk}</a> (next step of #{first.pk})" in rec_page


def test_it_says_why_there_is_no_next_probe_and_refuses_one(
    browser: Client, digits_rec: Any, sample: DataSample, device: Any
) -> None:
    none = {**NEXT, "candidate": None, "reason": "no untried candidate of this recommendation is smaller"}
    job = probe(digits_rec, sample, device, verdict={"text": "missed", "met": False, "next": none})
    html = browser.get(f"/probes/{job.pk}/").content.decode()
    assert "No untried candidate of this recommendation is smaller." in html and 'id="probe-next"' not in html
    answer = browser.post(f"/probes/{job.pk}/next/", follow=True)
    assert answer.redirect_chain[-1][0] == f"/probes/{job.pk}/"
    assert "proposes no candidate to probe next" in answer.content.decode()
    assert ProbeJob.objects.count() == 1


def test_it_shows_the_median_and_range_of_repeated_splits(
    browser: Client, digits_rec: Any, sample: DataSample, device: Any
) -> None:
    spread = {"median": 0.972, "low": 0.961, "high": 0.981, "splits": 3, "scores": [0.972, 0.961, 0.981]}
    results = {
        "split": {"train": 1077, "validation": 360, "test": 360, "seed": 0, "seeds": [0, 1, 2]},
        "baseline": {
            "model": "RBF SVM (C=10, gamma=0.0156)",
            "metric": "accuracy",
            "score": 0.983,
            "train_score": 1.0,
            "spread": {**spread, "median": 0.985},
            "chosen_by": "3-fold cross-validation on the training split",
            "models": [{"model": "logistic regression"}, {"model": "RBF SVM"}],
        },
        "deep": {"family": "cnn", "score": 0.972, "train_score": 1.0, "best_epoch": 9, "stopped": "plateau",
                 "epochs": [{"epoch": 9, "val": 0.97, "test": 0.972}], "spread": spread},
    }  # fmt: skip
    job = probe(digits_rec, sample, device, results=results, verdict={"text": "x", "met": False})
    html = browser.get(f"/probes/{job.pk}/").content.decode()
    assert "Median of 3 splits" in html and "0.972 <small>(0.961\u20130.981)</small>" in html
    assert "0.985 <small>" in html  # the baseline's, on the same splits
    assert "seeds 0, 1, 2" in html and "logistic regression and RBF SVM" in html


def _timed(seconds: float, *, how: str) -> dict[str, Any]:
    if how == "measured":
        return {"reached": True, "seconds_to_target": seconds}
    return {"reached": False, "forecast": {"reached": True, "seconds_to_target": seconds}}


def test_it_marks_the_candidate_the_probes_now_expect_first_without_renumbering(
    browser: Client, api: Any, digits_rec: Any, sample: DataSample, device: Any
) -> None:
    def verdict(role: str, timed: dict[str, Any] | None) -> dict[str, Any]:
        return {"text": "x", "met": True, "chosen": role, f"{role}_score": 0.97, "time_to_target": timed}

    probe(
        digits_rec, sample, device, deep_candidate=0, verdict=verdict("deep", _timed(300.0, how="measured"))
    )
    page = browser.get(f"/recommendations/{digits_rec.pk}/").content.decode()
    assert "The probes confirm candidate 1" in page  # the first already is the soonest probed
    faster = probe(
        digits_rec,
        sample,
        device,
        deep_candidate=None,
        shallow_candidate=1,
        verdict=verdict("shallow", _timed(120.0, how="predicted")),
    )
    page = browser.get(f"/recommendations/{digits_rec.pk}/").content.decode()
    assert "The probes now expect candidate 2" in page and "its learning curve predicts it" in page
    assert f"probe #{faster.pk}</a>), the soonest of the 2 probed candidates" in page
    assert "The candidates keep their numbers" in page
    candidates = api.get(f"/api/v1/recommendations/{digits_rec.pk}/").json()["candidates"]
    assert candidates[1]["accuracy_probe"]["expected_first"] is True
    assert "expected_first" not in candidates[0]["accuracy_probe"]
    assert [c["family"] for c in candidates] == [c["family"] for c in digits_rec.result["candidates"]]


def test_it_offers_and_shows_a_changed_candidate_as_the_next_step(
    browser: Client, digits_rec: Any, sample: DataSample, device: Any
) -> None:
    """A step that proposes the same candidate widened: the button says so, the next probe's page, the chain
    and the history show its change."""
    wider = {
        **NEXT,
        "diagnosis": "under-fitting",
        "candidate": 0,
        "change": "with every hidden width x2 (every hidden width x2 against the recommendation's)",
        "variation": {"width": 2},
        "reason": "probe candidate 1 again, with every hidden width x2",
    }
    verdict = {
        "text": "CNN scores 0.93, below the target 0.95",
        "met": False,
        "chosen": "deep",
        "next": wider,
    }
    first = probe(digits_rec, sample, device, verdict=verdict)
    html = browser.get(f"/probes/{first.pk}/").content.decode()
    assert "Probe candidate 1 again, changed next" in html and "with every hidden width x2" in html
    browser.post(f"/probes/{first.pk}/next/")
    second = ProbeJob.objects.exclude(pk=first.pk).get()
    assert second.variation == {"width": 2} and second.deep_candidate == 0
    shown = browser.get(f"/probes/{second.pk}/").content.decode()
    assert "Its candidate as the next step changed it: every hidden width x2." in shown
    assert "candidate 1 (every hidden width x2)" in shown  # its link in the chain
    history = browser.get("/history/probes/").content.decode()
    assert f"#{first.pk}</a> (every hidden width x2)" in history
