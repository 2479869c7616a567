"""A device's stored profile (writes): measured by advisor/profiling.py, kept on its `Device` row as the
median of its latest trusted profiles, handed to the engine as plain data so that estimates before any
calibration are "profiled"."""

from __future__ import annotations

from typing import cast

from advisor.engine.costmodel import with_current_factor
from advisor.engine.profile import DeviceProfile, merge, trusted
from advisor.models import Device

# profiles a device keeps: its estimates read the median of the trusted ones. A single profile's 2-thread
# points moved by tens of percent from one profiling to the next on a shared 2-core VM
# (bench/results/generalise_amd-epyc-2c_build/README.md)
PROFILE_HISTORY = 5


def store_profile(*, device: Device, profile: DeviceProfile) -> Device:
    device.profile = dict(profile)
    device.torch_version = profile["torch"]
    device.processor = profile["processor"]
    device.save(update_fields=["profile", "torch_version", "processor", "profile_history"])
    return device


def record_profile(*, device: Device, profile: DeviceProfile) -> Device:
    """A new profile into the device's history (its latest PROFILE_HISTORY of the same version, torch and
    processor): the stored profile becomes the median of the trusted ones (engine.profile.merge), its step
    factor derived again from the merged curves. One taken under contention (its `unreliable_reasons`) is
    kept in the history, to say when the device was last profiled, but not merged; where none is trusted the
    newest stands alone, so that estimates have a profile, and the worker profiles again sooner
    (workers.reprofile_due)."""
    same = (profile["version"], profile["kind"], profile["processor"], profile["torch"])
    earlier = [
        p
        for p in cast(list[DeviceProfile], device.profile_history or [])
        if (p.get("version"), p.get("kind"), p.get("processor"), p.get("torch")) == same
    ]
    history = [*earlier, profile][-PROFILE_HISTORY:]
    device.profile_history = [dict(p) for p in history]
    kept = [p for p in history if trusted(p)]
    # the merged curves' own step factor: each profile's factor was its whole steps against its own curves
    return store_profile(device=device, profile=with_current_factor(merge(kept)) if kept else profile)
