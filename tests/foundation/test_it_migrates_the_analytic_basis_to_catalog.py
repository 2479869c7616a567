"""Migration 0004: stored estimates of basis "analytic" (before device profiles) say "catalog", at any depth
of a recommendation, a calibration's measured estimate and a probe's results; other bases stay."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("advisor", "0003_device_profile"), ("probe", "0001_initial")]
AFTER = [("advisor", "0004_catalog_basis_for_analytic"), ("probe", "0001_initial")]


def _migrate(targets: list[tuple[str, str]]) -> Any:
    """Migrate to `targets`; the models of that state (the current ones may have columns it lacks)."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def latest_after() -> Iterator[None]:
    """The test database back at the latest migrations afterwards: later tests (and worker processes
    sharing the database) need today's schema."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _old(seconds: float) -> dict[str, Any]:
    return {"seconds_per_batch": seconds, "basis": "analytic"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("latest_after")
def test_it_renames_every_stored_analytic_basis_and_leaves_the_others(user: Any) -> None:
    apps = _migrate(BEFORE)
    Recommendation = apps.get_model("advisor", "Recommendation")
    Device = apps.get_model("advisor", "Device")
    CalibrationJob = apps.get_model("advisor", "CalibrationJob")
    ProbeJob = apps.get_model("probe", "ProbeJob")
    owner = apps.get_model(user._meta.app_label, user._meta.model_name).objects.get(pk=user.pk)
    scaling = {"basis": "W §III-H constant", "cut_per_doubling": 0.35}
    result = {
        "candidates": [
            {"family": "ffn", "estimate": {**_old(0.1), "scaling": scaling}},
            {"family": "cnn", "estimate": {"seconds_per_batch": 0.2, "basis": "profiled"}},
        ]
    }
    rec = Recommendation.objects.create(owner=owner, spec={"task": "tabular"}, result=result)
    device = Device.objects.create(
        id="migration-host-cpu0",
        host="migration-host",
        kind="cpu",
        name="Test CPU",
        cores=2,
        threads=2,
        queue="device.migration-host-cpu0",
    )
    measured = {"seconds_per_batch": 0.05, "basis": "measured", "analytic": _old(0.1)}
    job = CalibrationJob.objects.create(
        owner=owner, recommendation=rec, device=device, time_limit_seconds=60, estimate=measured
    )
    verdict = {"runs": [{"role": "shallow", "forecast": {"basis": "analytic", "epochs": 3}}]}
    probe = ProbeJob.objects.create(
        owner=owner, recommendation=rec, device=device, time_limit_seconds=60, verdict=verdict
    )

    _migrate(AFTER)

    rec.refresh_from_db()
    job.refresh_from_db()
    probe.refresh_from_db()
    first, second = (c["estimate"] for c in rec.result["candidates"])
    assert first == {"seconds_per_batch": 0.1, "basis": "catalog", "scaling": scaling}
    assert second["basis"] == "profiled"
    assert job.estimate == {**measured, "analytic": {"seconds_per_batch": 0.1, "basis": "catalog"}}
    assert probe.verdict["runs"][0]["forecast"] == {"basis": "catalog", "epochs": 3}
