"""A worker restarted by `manage.py serve` registers its devices with the restart (workers.RESTART_ENV): the
devices API, the wizard's device list and the job pages (calibration, probe) say so; a device never restarted
says nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from advisor import workers
from advisor.models import Device
from advisor.probe.models import ProbeJob
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
    probe = ProbeJob.objects.create(owner=user, recommendation=rec, device=device, time_limit_seconds=60)
    pages = [
        client_for.get(f"/calibrations/{finished_job(rec, device).pk}/").content.decode(),
        client_for.get(f"/probes/{probe.pk}/").content.decode(),
    ]
    if restart:
        assert "(worker restarted 2\N{MULTIPLICATION SIGN})" in chips
        assert all('id="worker-restarted"' in page and "killed by SIGKILL" in page for page in pages)
    else:
        assert "worker restarted" not in chips
        assert not any("worker-restarted" in page for page in pages)
