"""A real worker profiles the device it registers before taking jobs, once: a restart keeps the profile; and
while the device is idle it profiles it again, between jobs, keeping the median of its trusted profiles."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from advisor import profiling
from advisor.models import Device
from tests.conftest import WorkerProcess, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_profiles_its_device_before_taking_jobs_and_again_when_idle(tmp_path: Path) -> None:
    worker = WorkerProcess(tmp_path, env={"WORKER_PROFILE_DEVICES": "1"})
    # ready only after profiling, never during a job: seconds quiet, minutes on a busy machine
    worker.start(timeout=profiling.PROFILE_TIMEOUT + 60)
    try:
        device = Device.objects.get(pk=worker.device_id)
        assert device.profile is not None and device.torch_version == torch.__version__
        first = device.profile["profiled_at"]
        assert [p["profiled_at"] for p in device.profile_history] == [first]
        # the profiling child's start-up, which plans its calibrations before any has run here
        assert device.profile["child_start_seconds"] > 0
    finally:
        worker.stop()
    # the same host comes back, re-profiling its idle device a second after its latest profile
    again = WorkerProcess(tmp_path, env={"WORKER_PROFILE_DEVICES": "1", "WORKER_REPROFILE_SECONDS": "1"})
    again.host, again.device_id = worker.host, worker.device_id
    again.start(timeout=120)
    try:
        assert Device.objects.get(pk=worker.device_id).profile["profiled_at"] == first  # current: kept
        wait_for(
            lambda: len(Device.objects.get(pk=worker.device_id).profile_history) >= 2,
            # a profile the machine's load made outlast PROFILE_TIMEOUT is killed and asked for again
            timeout=2 * profiling.PROFILE_TIMEOUT + 60,
            interval=1,
            what="the idle device profiled again",
        )
        device = Device.objects.get(pk=worker.device_id)
        second = device.profile_history[-1]
        assert second["profiled_at"] >= first and "unreliable_reasons" in second
        trusted = [p for p in device.profile_history if not p.get("unreliable_reasons")]
        assert device.profile is not None and device.profile.get("merged", 1) == max(1, len(trusted))
    finally:
        again.stop()
