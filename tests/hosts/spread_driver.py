"""Runs inside test host a (its network namespace, where the private database is): submits one spread
calibration over the two hosts' CPU devices and reports, as JSON lines, when both ranks train and when
every job has finished. `python tests/hosts/spread_driver.py quick|long|cancel`.

quick submits through the API (POST calibrations/ with `devices`, as a client would); long and cancel through
the service, as they need a training longer than the API offers (data_parallel_min_seconds); cancel stops
the calibration through the API (POST calibrations/{rank 0's id}/cancel/)."""

from __future__ import annotations

import json
import sys
import time

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402  (after django.setup)
from rest_framework.test import APIClient  # noqa: E402

from advisor import services, spread  # noqa: E402
from advisor.models import CalibrationJob, Device  # noqa: E402
from tests.conftest import TABULAR_SPEC  # noqa: E402

SPEC = TABULAR_SPEC


def emit(**event: object) -> None:
    print(json.dumps(event), flush=True)


def _devices() -> list[Device] | None:
    found = list(Device.objects.filter(id__in=["hosta-cpu0", "hostb-cpu0"]).order_by("id"))
    return found if len(found) == 2 and all(d.online for d in found) else None


def main(mode: str) -> None:
    # a readiness poll that counts its looks (240, 0.5 s apart), not the clock: fails only if the workers
    # never announce their devices
    for _ in range(240):
        if (devices := _devices()) is not None:
            break
        time.sleep(0.5)
    assert devices is not None, "the two workers did not announce their devices after 240 looks"
    user = User.objects.create_user(username=f"spread-{mode}")
    api = APIClient()
    api.force_authenticate(user)
    rec = services.advise(owner=user, spec=SPEC)
    if mode == "quick":
        body = {"recommendation": rec.pk, "devices": [d.pk for d in devices], "time_limit_seconds": 600}
        response = api.post("/api/v1/calibrations/", body, format="json")
        assert response.status_code == 202, response.content
        ids = response.json()["spread"]["jobs"]
    else:
        jobs = spread.submit_spread_calibration(
            owner=user,
            recommendation=rec,
            candidate=0,
            devices=devices,
            time_limit_seconds=600,
            options={"data_parallel_min_seconds": 500},
        )
        ids = [j.pk for j in jobs]
    emit(
        type="submitted",
        jobs=ids,
        spread=[api.get(f"/api/v1/calibrations/{i}/").json()["spread"] for i in ids],
    )
    said = False
    steps: list[str] = []
    deadline = time.monotonic() + 400  # a readiness poll: gives up (type "timeout") only if it never ends
    while time.monotonic() < deadline:
        rows = list(CalibrationJob.objects.filter(pk__in=ids).order_by("pk"))
        if [r.step for r in rows] != steps:
            steps = [r.step for r in rows]
            emit(type="steps", steps=steps, statuses=[r.status for r in rows])
        if not said and all("timing" in r.step for r in rows):
            emit(type="training", steps=[r.step for r in rows])
            said = True
        if all(r.finished for r in rows):
            emit(
                type="done",
                jobs=[{"status": r.status, "error": r.error, "summary": r.summary} for r in rows],
            )
            return
        if mode == "cancel" and said and not rows[0].cancel_requested and not rows[0].finished:
            assert api.post(f"/api/v1/calibrations/{rows[0].pk}/cancel/").status_code == 200
        time.sleep(0.3)
    emit(type="timeout")


if __name__ == "__main__":
    main(sys.argv[1])
