"""Device profiles: measured once per device (and again after a torch or processor change), stored on its
`Device` row, handed to the engine as plain data so that estimates before any calibration are "profiled"."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterable
from typing import Any

from advisor import engine
from advisor.engine.profile import DeviceProfile, is_current
from advisor.models import Device

log = logging.getLogger(__name__)


class UnknownDevice(Exception):
    """A device named in a request that does not exist; `.errors` names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.errors = {field: [message]}


# --- writes ------------------------------------------------------------------------------------------------


def store_profile(*, device: Device, profile: DeviceProfile) -> Device:
    device.profile = dict(profile)
    device.torch_version = profile["torch"]
    device.processor = profile["processor"]
    device.save(update_fields=["profile", "torch_version", "processor"])
    return device


def profile_devices(devices: Iterable[Device], *, threads: list[int] | None = None) -> list[Device]:
    """Profile every device without a current profile (the worker calls this before taking jobs); a failed
    profile is logged and leaves the device on the catalog path, never stops the worker."""
    import torch

    from advisor.calibration.devices import cpu_model_name
    from advisor.calibration.profile import profile_in_child

    done = []
    for device in devices:
        processor = cpu_model_name() if device.kind == "cpu" else device.name
        if is_current(device.profile, torch_version=torch.__version__, processor=processor):
            continue
        try:
            name = f"{device.kind}:{device.index}" if device.kind == "cuda" else "cpu"
            profile = profile_in_child(name, threads=threads)
        except (RuntimeError, OSError, ValueError) as exc:
            log.warning("could not profile %s: %s", device.pk, exc)
            continue
        done.append(store_profile(device=device, profile=profile))
    return done


# --- reads -------------------------------------------------------------------------------------------------


def this_host() -> str:
    """The host name workers register under (`manage.py worker --host`'s default)."""
    return os.environ.get("ADVISOR_HOST") or socket.gethostname()


def resolve(name: str, *, shorthand: bool = True, field: str = "device") -> Device:
    """A Device from a request: its id or, with `shorthand` (the command line), `cpu` / `cuda:N` of this
    machine."""
    kind, _, index = name.partition(":")
    ident = name
    if shorthand and kind in ("cpu", "cuda") and (index or "0").isdigit():
        ident = f"{this_host()}-{kind}{index or 0}"
    device = Device.objects.filter(pk=ident).first()
    if device is None:
        known = ", ".join(Device.objects.values_list("pk", flat=True)[:20]) or "none registered"
        raise UnknownDevice(field, f"no device {name!r} (known: {known})")
    return device


def recommend(spec: Any, device: Device | None) -> dict[str, Any]:
    """engine.recommend with the device's profile when it has one (else the catalog path)."""
    if device is None or not device.profile:
        return engine.recommend(spec)
    return engine.recommend(spec, profile=device.profile, device=device.pk)


def preselected(devices: Iterable[Device], spec: dict[str, Any] | None) -> Device | None:
    """The live CPU device whose hardware the wizard prefilled, while the spec still describes it."""
    cores = ((spec or {}).get("hardware") or {}).get("cpu_cores")
    for device in devices:
        if device.kind == "cpu" and device.profile and device.cores == cores:
            return device
    return None
