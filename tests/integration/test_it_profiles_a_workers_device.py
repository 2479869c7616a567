"""A real worker profiles the device it registers before taking jobs, once: a restart keeps the profile."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from advisor.models import Device
from tests.conftest import WorkerProcess

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_profiles_its_device_before_taking_jobs_and_not_again(tmp_path: Path) -> None:
    worker = WorkerProcess(tmp_path, env={"WORKER_PROFILE_DEVICES": "1"})
    worker.start(timeout=240)  # ready only after profiling: never during a job
    try:
        device = Device.objects.get(pk=worker.device_id)
        assert device.profile is not None and device.torch_version == torch.__version__
        first = device.profile["profiled_at"]
    finally:
        worker.stop()
    again = WorkerProcess(tmp_path, env={"WORKER_PROFILE_DEVICES": "1"})
    again.host, again.device_id = worker.host, worker.device_id  # the same host comes back
    again.start(timeout=240)
    try:
        assert Device.objects.get(pk=worker.device_id).profile["profiled_at"] == first  # current: kept
    finally:
        again.stop()
