"""A worker restarted by `manage.py serve` registers its devices with the restart (workers.RESTART_ENV): the
devices API, the wizard's device list and the job page say so; a device never restarted says nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from advisor import workers
from advisor.models import Device
from tests.api.conftest import client_for as api_client_for
from tests.web.conftest import finished_job

pytestmark = pytest.mark.django_db
CPU = {"kind": "cpu", "index": 0, "name": "Test CPU", "cores": 2, "threads": 2}


def _register(monkeypatch: pytest.MonkeyPatch, restart: dict[str, Any] | None) -> Device:
    if restart is None:
        monkeypatch.delenv(workers.RESTART_ENV, raising=False)
    else:
        monkeypatch.setenv(workers.RESTART_ENV, json.dumps(restart))
    (device,) = workers.register_devices(host="box", worker="cpu0@box", devices=[dict(CPU)])
    return device


RESTART = {"count": 2, "reason": "killed by SIGKILL", "at": "2026-11-22T23:00:00+00:00"}


@pytest.mark.parametrize("restart", [RESTART, None])
def test_it_says_the_worker_restarted(
    monkeypatch: pytest.MonkeyPatch, client_for: Client, user: Any, rec: Any, restart: Any
) -> None:
    device = _register(monkeypatch, restart)
    (row,) = api_client_for(user).get("/api/v1/devices/").json()
    assert row["restart"] == restart
    chips = client_for.get("/?step=hardware").content.decode()
    job_page = client_for.get(f"/calibrations/{finished_job(rec, device).pk}/").content.decode()
    if restart:
        assert "(worker restarted 2\N{MULTIPLICATION SIGN})" in chips
        assert 'id="worker-restarted"' in job_page and "killed by SIGKILL" in job_page
    else:
        assert "worker restarted" not in chips and "worker-restarted" not in job_page
