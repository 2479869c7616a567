"""Probes end to end through a real `manage.py worker` process: real training on bundled data, the verdict,
the page, the time limit and cancellation."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.conftest import WorkerProcess, wait_for
from tests.probe.conftest import DIGITS_SPEC, IRIS_SPEC

pytestmark = pytest.mark.slow

FINISHED = {"succeeded", "failed", "cancelled"}


def _start(api: Any, spec: dict[str, Any], demo: str, device: str, limit: int) -> int:
    rec = api.post("/api/v1/recommendations/", spec, format="json")
    assert rec.status_code == 201, rec.content
    sample = api.post("/api/v1/samples/", {"demo": demo, "recommendation": rec.json()["id"]}, format="json")
    assert sample.status_code == 201, sample.content
    body = {"recommendation": rec.json()["id"], "sample": sample.json()["id"], "device": device}
    job = api.post("/api/v1/probes/", {**body, "time_limit_seconds": limit}, format="json")
    assert job.status_code == 202, job.content
    return int(job.json()["id"])


def _wait(api: Any, pk: int, worker: WorkerProcess, timeout: float) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        job = api.get(f"/api/v1/probes/{pk}/").json()
        return job if job["status"] in FINISHED else None

    return wait_for(done, timeout=timeout, what=f"probe {pk} to finish\n{worker.log()[-3000:]}")


def _answered_in_time(job: dict[str, Any]) -> bool:
    """The probe answered by itself: past its time limit the worker stops the training process and the job
    ends `timed_out` with "stopped at the time limit" (advisor/probe/learning/child.py). Its own time is
    recorded, not bounded here: seconds depend on the machine (the limit itself is tested without a clock
    in tests/probe/test_learning.py, the hard stop in tests/calibration/test_runner.py)."""
    return job["status"] == "succeeded" and job["results"]["timing"]["probe_s"] is not None


def test_it_probes_iris_and_digits_then_cancels_on_a_worker(
    api: Any, user: Any, worker: WorkerProcess, samples_dir: Any
) -> None:
    # iris is scored on three splits (its test split has 30 examples) with a tuned baseline on each: its
    # shallow FFN needs a few hundred small epochs per split, which a busy 2-core machine gives in 30 s
    iris = _start(api, IRIS_SPEC, "iris", worker.device_id, limit=30)
    # A target the shallow FFN (about 0.97 on digits) misses, so the deep candidate is trained too.
    digits = _start(
        api,
        {**DIGITS_SPEC, "data": {**DIGITS_SPEC["data"], "examples": 20000}, "target": {"accuracy": 0.995}},
        "digits",
        worker.device_id,
        limit=40,
    )

    job = _wait(api, iris, worker, timeout=90)
    assert _answered_in_time(job), (job["status"], job["error"], worker.log()[-3000:])
    verdict, results = job["verdict"], job["results"]
    assert results["shallow"]["score"] >= 0.9  # iris: the shallow FFN suffices ...
    assert verdict["deep_needed"] is False and "deep not needed" in verdict["text"]
    assert "deep" not in results  # ... and the deep one is never trained
    # the better by cross-validation of the two tuned classical models, on each of iris's three splits
    assert {m["model"] for m in results["baseline"]["models"]} == {"logistic regression", "RBF SVM"}
    assert results["split"]["seeds"] == [0, 1, 2] and results["baseline"]["spread"]["splits"] >= 2

    job = _wait(api, digits, worker, timeout=120)
    assert _answered_in_time(job), (job["status"], job["error"], worker.log()[-3000:])
    verdict, results = job["verdict"], job["results"]
    assert results["baseline"]["score"] > 0.5
    # the verdict reports each network's median over the splits it was scored on (one where time ran short)
    shallow, deep = (
        (results[role].get("spread") or {}).get("median", results[role]["score"])
        for role in ("shallow", "deep")
    )
    assert 0.5 < shallow < 0.995 and deep > 0.5  # both trained on the sample, neither by chance
    assert verdict["deep_needed"] is True and verdict["deep_score"] == deep
    assert f"{shallow:.2f}" in verdict["text"] and f"{deep:.2f}" in verdict["text"]
    curve = results["curve"]
    assert len(curve["points"]) >= 2 and curve["examples"] == 16000  # 80% of the declared 20,000
    assert curve["low"] <= curve["estimate"] <= curve["high"] <= 1.0
    # missed: the verdict diagnoses from its own curves and names what to try next (test_next_step.py)
    assert verdict["met"] is False
    assert verdict["next"]["diagnosis"] in {"under-fitting", "data", "over-fitting"}
    assert verdict["next"]["from_candidate"] in (job["shallow_candidate"], job["deep_candidate"])

    page = Client()
    page.force_login(user)
    html = page.get(f"/probes/{digits}/").content.decode()
    assert "<svg" in html and "net.shallow.first" in html and "net.shallow.validate" in html
    polled = page.get(f"/probes/{digits}/", HTTP_HX_REQUEST="true")
    assert polled.status_code == 286  # htmx: stop polling, the probe is done

    # Cancelling a running probe stops its training process and keeps what it measured.
    pk = _start(api, DIGITS_SPEC, "digits", worker.device_id, limit=120)
    wait_for(
        lambda: api.get(f"/api/v1/probes/{pk}/").json()["results"].get("baseline"),
        timeout=90,
        what=f"probe {pk} to report its baseline\n{worker.log()[-3000:]}",
    )
    assert api.post(f"/api/v1/probes/{pk}/cancel/").status_code == 200
    job = _wait(api, pk, worker, timeout=20)
    assert job["status"] == "cancelled" and job["verdict"] is None
    assert job["error"] == "cancelled on request"  # stopped on request, not at its limit of 120 s
    assert job["results"]["baseline"]["score"] > 0.5 and job["results"]["split"]["train"] > 0
