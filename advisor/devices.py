"""Which device a request means (reads): its id, `cpu` / `cuda:N` of this host on the command line, or the
live device the wizard prefilled the hardware from."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from typing import Any

from advisor.models import Device


class UnknownDevice(Exception):
    """A device named in a request that does not exist; `.errors` names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.errors = {field: [message]}


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


def preselected(devices: Iterable[Device], spec: dict[str, Any] | None) -> Device | None:
    """The live CPU device whose hardware the wizard prefilled, while the spec still describes it."""
    cores = ((spec or {}).get("hardware") or {}).get("cpu_cores")
    for device in devices:
        if device.kind == "cpu" and device.profile and device.cores == cores:
            return device
    return None
