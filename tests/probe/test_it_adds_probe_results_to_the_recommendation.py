"""A finished probe's scores travel with the recommendation (API and pages), beside the time estimates."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from advisor import queries, services, workers
from advisor.probe.models import ProbeJob

pytestmark = pytest.mark.django_db


def test_it_adds_the_latest_probe_to_its_candidates(user: Any, tabular_spec: dict[str, Any]) -> None:
    rec = services.advise(owner=user, spec=tabular_spec)
    assert all("accuracy_probe" not in c for c in queries.recommendation_payload(rec)["candidates"])
    (device,) = workers.register_devices(host="merge", worker="w", devices=[{"kind": "cpu", "name": "CPU"}])
    verdict = {
        "metric": "accuracy",
        "shallow_score": 0.93,
        "chosen": "shallow",
        "expected": {"value": 0.95},
        "time_to_target": {"epochs": 12},
    }
    job = ProbeJob.objects.create(
        owner=user,
        recommendation=rec,
        device=device,
        shallow_candidate=0,
        time_limit_seconds=60,
        status=ProbeJob.SUCCEEDED,
        verdict=verdict,
        finished_at=timezone.now(),
    )
    first = queries.recommendation_payload(rec)["candidates"][0]
    assert first["accuracy_probe"]["probe"] == job.pk
    assert first["accuracy_probe"]["score"] == 0.93
    assert first["accuracy_probe"]["time_to_target"] == {"epochs": 12}
    assert first["estimate"]["basis"] == "catalog"  # a probe measures accuracy, not the time per batch
