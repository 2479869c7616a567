"""Profiling a device now: when a worker starts on a device without a current profile (and again after a torch
or processor change), then again while the device is idle (advisor/workers.py). The profile runs in a child
process (advisor/calibration/profile.py) and is recorded by advisor/profiles.py."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterable

from advisor import queueing
from advisor.engine.profile import DeviceProfile, is_current
from advisor.models import Device
from advisor.profiles import record_profile

log = logging.getLogger(__name__)


# a profile took 15-17 s on a quiet 2-core VM before version 7 (which adds a few points); at load 10 a
# version 7 one took 174 s (bench/results/generalise_amd-epyc-2c_build/README.md): untrusted then, but at a
# worker's start better than none
PROFILE_TIMEOUT = 300.0


def profile_now(device: Device, *, threads: list[int] | None = None) -> DeviceProfile | None:
    """The device profiled in a child process; None (logged) where profiling failed or timed out."""
    from advisor.calibration.profile import profile_in_child

    try:
        name = f"{device.kind}:{device.index}" if device.kind == "cuda" else "cpu"
        return profile_in_child(name, threads=threads, timeout=PROFILE_TIMEOUT)
    except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
        log.warning("could not profile %s: %s", device.pk, exc)
        return None


def profile_devices(devices: Iterable[Device], *, threads: list[int] | None = None) -> list[Device]:
    """Profile every device without a current profile (the worker calls this before taking jobs); a failed
    profile is logged and leaves the device on the catalog path, never stops the worker."""
    import torch

    from advisor.calibration.devices import cpu_model_name

    done = []
    for device in devices:
        processor = cpu_model_name() if device.kind == "cpu" else device.name
        if is_current(device.profile, torch_version=torch.__version__, processor=processor):
            continue
        profile = profile_now(device, threads=threads)
        if profile is not None:
            done.append(record_profile(device=device, profile=profile))
    return done


def refresh_profile(*, device: Device) -> Device | None:
    """Profile the idle device again (the worker's task, advisor/workers.py); None where a job came first
    (jobs before profiles: the worker asks again later) or profiling failed."""
    if not queueing.idle(device.pk):
        return None
    profile = profile_now(device)
    return record_profile(device=device, profile=profile) if profile is not None else None
