"""The engine's recommendation for a device: timed from its profile when it has one (else the catalog path),
corrected by the model learned from its calibrations (advisor/timemodels.py) when there is one."""

from __future__ import annotations

from typing import Any

from advisor import engine
from advisor.contract import Recommendation
from advisor.models import Device
from advisor.timemodels import correction_for


def recommend(spec: Any, device: Device | None) -> Recommendation:
    """engine.recommend with the device's profile when it has one (else the catalog path), corrected by the
    model learned from its calibrations when there is one."""
    if device is None or not device.profile:
        return engine.recommend(spec)
    return engine.recommend(spec, profile=device.profile, device=device.pk, correction=correction_for(device))
