"""Device profiles: measured when a worker starts on a device without a current one (and again after a torch
or processor change), then again while the device is idle (advisor/workers.py), stored on its `Device` row as
the median of its latest trusted profiles, handed to the engine as plain data so that estimates before any
calibration are "profiled"."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import socket
import subprocess
from collections.abc import Iterable
from typing import Any, cast

from advisor import engine, queueing
from advisor.contract import Recommendation
from advisor.engine.learned import FEATURES, Correction, Validation, fit_correction
from advisor.engine.profile import DeviceProfile, is_current, merge, trusted
from advisor.models import CalibrationJob, Device, MeasuredConfiguration, TimeModel

log = logging.getLogger(__name__)


class UnknownDevice(Exception):
    """A device named in a request that does not exist; `.errors` names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.errors = {field: [message]}


# --- writes ------------------------------------------------------------------------------------------------


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
    processor): the stored profile becomes the median of the trusted ones (engine.profile.merge). One taken
    under contention (its `unreliable_reasons`) is kept in the history, to say when the device was last
    profiled, but not merged; where none is trusted the newest stands alone, so that estimates have a
    profile, and the worker profiles again sooner (workers.reprofile_due)."""
    same = (profile["version"], profile["kind"], profile["processor"], profile["torch"])
    earlier = [
        p
        for p in cast(list[DeviceProfile], device.profile_history or [])
        if (p.get("version"), p.get("kind"), p.get("processor"), p.get("torch")) == same
    ]
    history = [*earlier, profile][-PROFILE_HISTORY:]
    device.profile_history = [dict(p) for p in history]
    kept = [p for p in history if trusted(p)]
    return store_profile(device=device, profile=merge(kept) if kept else profile)


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


def refit_time_model(*, device: Device) -> TimeModel | None:
    """Fit the device's learned correction on every reliable successful measurement on it (the Celery task
    after each finished calibration); a new version with its cross-validated error and whether it beat the
    profile alone on those rows (engine.learned.Validation), or None while too few rows."""
    if not device.profile:
        return None
    measured = MeasuredConfiguration.objects.filter(
        job__device=device, job__status=CalibrationJob.SUCCEEDED, status="ok", seconds_per_batch__gt=0
    ).select_related("job__recommendation")
    configs = []
    for m in measured:
        if (m.result or {}).get("unreliable"):  # contended or imprecise: nothing to learn from
            continue
        candidate = m.job.recommendation.result["candidates"][m.job.candidate]
        key = hashlib.sha1(json.dumps(candidate["networks"], sort_keys=True).encode()).hexdigest()
        configs.append((key, candidate, m.batch_size, m.threads or 1, float(m.seconds_per_batch or 0)))
    correction = fit_correction(configs, device.profile)
    if correction is None:
        return None
    last = device.time_models.order_by("-version").first()
    return TimeModel.objects.create(
        device=device,
        version=(last.version + 1) if last else 1,
        rows=len(configs),
        networks=len({c[0] for c in configs}),
        expected_error=correction.validation["p90_error"],
        median_error=correction.validation["median_error"],
        validation=dict(correction.validation),
        fitted=pickle.dumps(correction.model),
    )


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


def correction_for(device: Device) -> Correction | None:
    """The device's latest learned correction, with its validation (used or not: the estimate says which
    timed it and why), if one was fitted on today's features and validated against the profile."""
    latest = device.time_models.order_by("-version").first()
    if latest is None or "used" not in (latest.validation or {}):
        return None  # none, or fitted before the gate: the next finished calibration refits it
    # our own rows, written by refit_time_model: not data from a user
    model = pickle.loads(bytes(latest.fitted))
    if getattr(model, "n_features_in_", FEATURES) != FEATURES:
        return None  # fitted on an older feature set: the next finished calibration refits it
    return Correction(model, latest.expected_error, cast(Validation, latest.validation))


def recommend(spec: Any, device: Device | None) -> Recommendation:
    """engine.recommend with the device's profile when it has one (else the catalog path), corrected by the
    model learned from its calibrations when there is one."""
    if device is None or not device.profile:
        return engine.recommend(spec)
    return engine.recommend(spec, profile=device.profile, device=device.pk, correction=correction_for(device))


def preselected(devices: Iterable[Device], spec: dict[str, Any] | None) -> Device | None:
    """The live CPU device whose hardware the wizard prefilled, while the spec still describes it."""
    cores = ((spec or {}).get("hardware") or {}).get("cpu_cores")
    for device in devices:
        if device.kind == "cpu" and device.profile and device.cores == cores:
            return device
    return None
