"""The probe's limits: Django settings when set there (tests override them), else environment variables read
through advisor.env so a typo stops start-up instead of falling back silently."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from advisor.env import env_int
from advisor.probe.learning.samples import Limits

DEFAULTS = {
    "SAMPLE_MAX_BYTES": 20_000_000,  # decimal, as the pages write bytes: "at most 20 MB"
    "SAMPLE_MAX_EXAMPLES": 50_000,
    "SAMPLE_MAX_VALUES": 20_000_000,
    "SAMPLES_PER_USER": 50,
    "PROBE_DEFAULT_SECONDS": 90,
    "PROBE_MAX_SECONDS": 600,
    "PROBE_MAX_PARAMETERS": 20_000_000,
    "PROBES_ACTIVE_PER_USER": 5,  # queued or running at once
}


def value(name: str) -> int:
    if hasattr(settings, name):
        return int(getattr(settings, name))
    return env_int(name, DEFAULTS[name], minimum=1)


def limits() -> Limits:
    return Limits(
        max_bytes=value("SAMPLE_MAX_BYTES"),
        max_examples=value("SAMPLE_MAX_EXAMPLES"),
        max_values=value("SAMPLE_MAX_VALUES"),
    )


def samples_root() -> Path:
    return Path(settings.VAR_DIR) / "samples"
