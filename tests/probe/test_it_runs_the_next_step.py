"""POST /api/v1/probes/{id}/next/ (issue 25 item 4): the candidate a finished probe's verdict proposes, run as
the next probe of the same sample, device and time limit, which records its predecessor; once per probe;
refused with the probes' usual 400 shapes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from advisor.probe import services
from advisor.probe.models import DataSample, ProbeJob

pytestmark = pytest.mark.django_db


def step(candidate: int | None) -> dict[str, Any]:
    return {
        "diagnosis": "over-fitting",
        "text": "The CNN scores 1.00 on its training split but 0.93 held out.",
        "advice": "regularisation, a smaller network or more data",
        "from_candidate": 0,
        "candidate": candidate,
        "change": None,
        "reason": "probe candidate 2 next" if candidate is not None else "no untried candidate is smaller",
    }


@pytest.fixture
def sample(user: Any, samples_dir: Any, digits_rec: Any) -> DataSample:
    return services.create_sample(owner=user, demo="digits", recommendation=digits_rec)


def missed(rec: Any, kept: DataSample, device: Any, *, candidate: int | None = 1, **fields: Any) -> ProbeJob:
    """A probe that missed its target as its worker leaves it (written directly: the endpoint reads it)."""
    values: dict[str, Any] = {
        "status": ProbeJob.SUCCEEDED,
        "shallow_candidate": None,
        "deep_candidate": 0,
        "time_limit_seconds": 45,
        "verdict": {"text": "CNN scores 0.93, below the target", "met": False, "next": step(candidate)},
        **fields,
    }
    values.setdefault("sample", kept)  # fields may name another (None: deleted since)
    return ProbeJob.objects.create(owner=rec.owner, recommendation=rec, device=device, **values)


def test_it_runs_the_proposed_candidate_as_the_next_probe_once(
    api: APIClient, digits_rec: Any, sample: DataSample, device: Any
) -> None:
    first = missed(digits_rec, sample, device)
    answer = api.post(f"/api/v1/probes/{first.pk}/next/")
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert answer["Location"].endswith(f"/api/v1/probes/{body['id']}/")
    assert body["previous"] == first.pk and body["status"] == "queued"
    assert (body["sample"], body["device"], body["time_limit_seconds"]) == (sample.pk, device.id, 45)
    depth = digits_rec.result["candidates"][1]["depth"]
    assert (body["shallow_candidate"], body["deep_candidate"]) == (
        (1, None) if depth == "shallow" else (None, 1)
    )
    assert api.get(f"/api/v1/probes/{first.pk}/").json()["followed_by"] == [body["id"]]
    again = api.post(f"/api/v1/probes/{first.pk}/next/")  # a second click: the same next probe
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    assert ProbeJob.objects.count() == 2


@pytest.mark.parametrize(
    ("fields", "key", "words"),
    [
        ({"status": ProbeJob.RUNNING, "verdict": None}, "probe", "has not finished"),
        (
            {"candidate": None},
            "probe",
            "proposes no candidate to probe next: no untried candidate is smaller",
        ),
        ({"verdict": {"text": "FFN reaches 0.99 (target 0.95)", "met": True}}, "probe", "met its target"),
        ({"candidate": 7}, "probe", "candidate 8 cannot be probed"),
        ({"sample": None}, "sample", "the probe's sample was deleted"),
        ({"offline": True}, "device", "is offline"),
    ],
)
def test_it_refuses_with_the_probes_field_messages(
    api: APIClient,
    digits_rec: Any,
    sample: DataSample,
    device: Any,
    fields: dict[str, Any],
    key: str,
    words: str,
) -> None:
    fields = dict(fields)
    if fields.pop("offline", False):
        device.last_seen = timezone.now() - timedelta(days=1)
        device.save(update_fields=["last_seen"])
    job = missed(digits_rec, sample, device, **fields)
    if "sample" in fields:  # deleted after the probe ran (the row keeps the probe, SET_NULL)
        assert job.sample is None
    answer = api.post(f"/api/v1/probes/{job.pk}/next/")
    assert answer.status_code == 400
    assert words in " ".join(answer.json()[key])
    assert ProbeJob.objects.count() == 1


def test_it_hides_another_users_probe(
    api: APIClient, other_user: Any, digits_rec: Any, sample: DataSample, device: Any
) -> None:
    job = missed(digits_rec, sample, device)
    other = APIClient()
    other.force_authenticate(other_user)
    assert other.post(f"/api/v1/probes/{job.pk}/next/").status_code == 404
    assert ProbeJob.objects.count() == 1
