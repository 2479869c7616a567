"""kill -9 of the worker in the middle of an accuracy probe (the calibration case is in
tests/integration/test_it_calibrates_on_a_real_worker.py): the training child dies with it, and once a worker
is back on the device (as `manage.py serve` restarts it) the probe is queued again within 60 s and finishes;
none is left running or queued for ever."""

from __future__ import annotations

from typing import Any

import psutil
import pytest

from advisor.probe.models import ProbeJob
from tests.conftest import WorkerProcess, wait_for
from tests.probe.conftest import DIGITS_SPEC

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_requeues_and_finishes_a_probe_whose_worker_was_killed(
    api: Any, worker: WorkerProcess, samples_dir: Any
) -> None:
    spec = {**DIGITS_SPEC, "data": {**DIGITS_SPEC["data"], "examples": 20000}, "target": {"accuracy": 0.995}}
    rec = api.post("/api/v1/recommendations/", spec, format="json").json()
    sample = api.post(
        "/api/v1/samples/", {"demo": "digits", "recommendation": rec["id"]}, format="json"
    ).json()
    body = {"recommendation": rec["id"], "sample": sample["id"], "device": worker.device_id}
    job = api.post("/api/v1/probes/", {**body, "time_limit_seconds": 20}, format="json").json()
    pk = int(job["id"])
    wait_for(
        lambda: ProbeJob.objects.get(pk=pk).status != "queued", timeout=90, what=f"start\n{worker.log()}"
    )
    started = ProbeJob.objects.get(pk=pk)
    assert started.status == "running", (started.status, started.error)
    assert worker.proc is not None
    wait_for(lambda: psutil.Process(worker.proc.pid).children(), timeout=30, what="the training child")  # type: ignore[union-attr]
    children = worker.kill()
    wait_for(lambda: not any(psutil.pid_exists(p) for p in children), timeout=15, what="the child to die")
    assert ProbeJob.objects.get(pk=pk).status == "running"  # nobody has noticed yet

    worker.start()  # the same host: the same device and queue, as a supervisor restarts it
    recovered = wait_for(
        lambda: ((j := ProbeJob.objects.get(pk=pk)).attempts >= 2 or j.finished) and j,
        timeout=60,
        what=f"the orphaned probe to be recovered\n{worker.log()[-3000:]}",
    )
    assert recovered.attempts == 2 or recovered.error, "recovered, or failed with a reason"
    final = wait_for(
        lambda: (j := ProbeJob.objects.get(pk=pk)).finished and j,
        timeout=120,
        what=f"the probe to finish\n{worker.log()[-3000:]}",
    )
    assert final.status == "succeeded", (final.error, worker.log()[-3000:])
    assert final.attempts == 2
