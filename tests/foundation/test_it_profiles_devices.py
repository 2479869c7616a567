"""Device profiles: measured in a child process, stored on the host's Device, refreshed when torch or the
processor changed; the advise command's --device; estimates say their basis and error band."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any, cast

import pytest
import torch
from django.core.management import call_command
from django.core.management.base import CommandError

from advisor import advice, engine, profiles, profiling, services, tasks, timemodels, workers
from advisor.calibration.devices import cpu_model_name
from advisor.engine.costmodel import step_cost, with_current_factor
from advisor.engine.learned import FEATURES
from advisor.engine.profile import DeviceProfile
from advisor.engine.wholesteps import WHOLE_STEPS
from advisor.models import CalibrationJob, Device, MeasuredConfiguration, TimeModel
from tests.conftest import advise_command
from tests.engine.profiles import scaled, synthetic_profile

pytestmark = pytest.mark.django_db


def _device(host: str, profile: dict[str, Any] | None = None) -> Device:
    (row,) = workers.register_devices(
        host=host, worker=f"cpu0@{host}", devices=[{"kind": "cpu", "index": 0, "name": "x", "cores": 2}]
    )
    if profile is not None:
        profiles.store_profile(device=row, profile=profile)  # type: ignore[arg-type]
    return row


def test_a_worker_profiles_a_device_without_a_current_profile_and_leaves_a_current_one() -> None:
    stale = _device("stale", dict(synthetic_profile()))  # made by another torch on another processor
    current = synthetic_profile()
    current.update(torch=torch.__version__, processor=cpu_model_name())
    fresh = _device("fresh", dict(current))
    done = profiling.profile_devices([stale, fresh], threads=[1])
    assert [d.pk for d in done] == [stale.pk]
    stale.refresh_from_db()
    fresh.refresh_from_db()
    assert stale.torch_version == torch.__version__ and stale.processor == cpu_model_name()
    assert stale.profile is not None and stale.profile["allocator"] == "tuned"  # measured as calibrations run
    rates = stale.profile["threads"]["1"]
    assert set(stale.profile["threads"]) == {"1"}
    for curve in ("linear", "conv", "recurrent", "rnn", "elementwise"):
        works = [w for w, _ in rates[curve]]
        assert works == sorted(works) and all(s > 0 for _, s in rates[curve])
    assert rates["step_seconds"] > 0 and rates["optimizer"]["adam"][-1][1] > 0
    # whole harness steps against the layer-by-layer model, and the recurrent growth: measured, within bounds
    assert 0.5 <= rates["step_factor"] <= 3.0 and 0.0 <= rates["sequence_exponent"] <= 1.5
    # the whole steps' seconds are kept, and today's model derives the stored factor from them again
    assert len(rates["whole_step_seconds"]) == len(WHOLE_STEPS) and min(rates["whole_step_seconds"]) > 0
    assert len(rates["sequence_step_seconds"]) == 2 and min(rates["sequence_step_seconds"]) > 0
    assert with_current_factor(stale.profile)["threads"]["1"]["step_factor"] == pytest.approx(
        rates["step_factor"]
    )
    assert fresh.profile == current  # not measured again: still the stored synthetic one


def test_profile_device_stores_and_prints_the_profile(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("profile_device", "--host", "cmdhost", "--threads", "1")
    out = json.loads(capsys.readouterr().out)
    row = Device.objects.get(pk="cmdhost-cpu0")
    assert out["device"] == row.pk and out["threads"] == row.profile["threads"]
    assert row.torch_version == torch.__version__ and row.processor == cpu_model_name()


def test_profile_device_refuses_a_device_this_machine_lacks() -> None:
    with pytest.raises(CommandError, match="no device 'cuda:7'"):
        call_command("profile_device", "--device", "cuda:7", "--host", "cmdhost")


def test_advise_times_the_network_from_the_named_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tabular_spec: dict[str, Any]
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(tabular_spec))
    profiled = _device("clihost", dict(synthetic_profile()))
    code, out, _ = advise_command(capsys, str(path), "--device", profiled.pk)
    assert code == 0
    estimate = json.loads(out)["candidates"][0]["estimate"]
    assert (estimate["basis"], estimate["device"]) == ("profiled", profiled.pk)
    assert 0 < estimate["expected_error"] < 1
    bare = _device("barehost")
    code, out, _ = advise_command(capsys, str(path), "--device", bare.pk)
    assert code == 0 and json.loads(out)["candidates"][0]["estimate"]["basis"] == "catalog"


@pytest.mark.parametrize("name", ["nowhere-cpu0", "cuda:9", ""])
def test_advise_exits_2_naming_the_device_for_an_unknown_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tabular_spec: dict[str, Any], name: str
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(tabular_spec))
    code, out, err = advise_command(capsys, str(path), "--device", name)
    assert code == 2 and out == ""
    assert "no device" in json.loads(err)["device"][0]


def _calibrated(user: Any, device: Device, specs: list[dict[str, Any]], slow: float) -> None:
    """Finished calibrations whose measurements run `slow` times what the profile predicts, as on a device
    whose real steps cost more than its profile's isolated operations."""
    profile = device.profile
    for s in specs:
        rec = services.advise(owner=user, spec=s)
        candidate = rec.result["candidates"][0]
        job = CalibrationJob.objects.create(
            owner=user,
            recommendation=rec,
            device=device,
            batch_sizes=[16, 64, 256],
            threads=[1, 2],
            time_limit_seconds=60,
            status=CalibrationJob.SUCCEEDED,
        )
        for batch in (16, 64, 256):
            for threads in (1, 2):
                seconds = (
                    slow * step_cost(candidate, batch_size=batch, threads=threads, profile=profile).seconds
                )
                MeasuredConfiguration.objects.create(
                    job=job, batch_size=batch, threads=threads, seconds_per_batch=seconds, result={}
                )


def test_a_finished_calibration_refits_the_devices_time_model(
    user: Any, tabular_spec: dict[str, Any]
) -> None:
    device = _device("learns", dict(synthetic_profile()))
    assert tasks.refit_time_model(device.pk) is None  # nothing measured yet: the profile alone
    specs = [
        tabular_spec,
        {**tabular_spec, "data": {"examples": 5000, "input_shape": [300], "outputs": 10}},
        {
            **tabular_spec,
            "data": {"examples": 5000, "input_shape": [1, 28, 28], "outputs": 10},
            "task": "vision",
        },
        {**tabular_spec, "data": {"examples": 5000, "input_shape": [40], "outputs": 4}},
    ]
    _calibrated(user, device, specs, slow=1.5)
    assert tasks.refit_time_model(device.pk) == 1
    model = TimeModel.objects.get(device=device)
    assert (model.rows, model.networks) == (24, 4) and 0 <= model.expected_error < 0.2
    profiled = advice.recommend(tabular_spec, None)
    predicted = advice.recommend(tabular_spec, device)["candidates"][0]["estimate"]
    assert predicted["basis"] == "predicted" and predicted["expected_error"] == model.expected_error
    plain = engine.recommend(tabular_spec, profile=device.profile, device=device.pk)
    ratio = predicted["seconds_per_batch"] / plain["candidates"][0]["estimate"]["seconds_per_batch"]
    assert 1.3 < ratio < 1.7  # learned the 1.5x the measurements showed
    assert profiled["candidates"][0]["estimate"]["basis"] == "catalog"
    assert tasks.refit_time_model(device.pk) == 2  # each refit is a new version


def test_a_time_model_fitted_on_another_feature_set_is_not_used(tabular_spec: dict[str, Any]) -> None:
    """A correction stored before the features changed (it had 17) would fail on today's rows: the profile
    alone times the spec until the next finished calibration refits it."""
    from sklearn.ensemble import GradientBoostingRegressor

    device = _device("stale-model", dict(synthetic_profile()))
    old = GradientBoostingRegressor(n_estimators=5).fit(
        [[float(i)] * (FEATURES + 10) for i in range(8)], [0.1] * 8
    )
    TimeModel.objects.create(
        device=device,
        version=1,
        rows=8,
        networks=3,
        expected_error=0.1,
        median_error=0.05,
        fitted=pickle.dumps(old),
    )
    assert timemodels.correction_for(device) is None
    estimate = advice.recommend(tabular_spec, device)["candidates"][0]["estimate"]
    assert estimate["basis"] == "profiled"


def _scaled(factor: float, **extra: Any) -> DeviceProfile:
    """The synthetic profile with every curve's seconds times `factor`, and `extra` fields."""
    return cast(DeviceProfile, {**scaled(synthetic_profile(), factor), **extra})


def _linear(device: Device) -> list[float]:
    assert device.profile is not None
    return [s for _, s in device.profile["threads"]["1"]["linear"]]


def test_a_device_keeps_the_median_of_its_latest_trusted_profiles() -> None:
    device = _device("history")
    base = _linear_of(_scaled(1.0))
    contended = [{"code": "runnable", "text": "others ran"}]
    for i, factor in enumerate((1.0, 3.0, 2.0)):
        device = profiles.record_profile(
            device=device, profile=_scaled(factor, profiled_at=f"2026-01-0{i + 1}")
        )
    assert _linear(device) == pytest.approx([2 * s for s in base])  # the median of 1x, 3x, 2x
    assert device.profile is not None and device.profile["merged"] == 3
    # taken under contention: kept in the history (when it was taken), not in the median
    device = profiles.record_profile(
        device=device,
        profile=_scaled(50.0, profiled_at="2026-01-04", unreliable_reasons=contended),
    )
    assert _linear(device) == pytest.approx([2 * s for s in base]) and len(device.profile_history) == 4
    for day in (5, 6, 7):  # only the latest PROFILE_HISTORY stay: 3x, 2x, contended, 4x, 4x
        device = profiles.record_profile(device=device, profile=_scaled(4.0, profiled_at=f"2026-01-0{day}"))
    assert len(device.profile_history) == profiles.PROFILE_HISTORY
    assert _linear(device) == pytest.approx([4 * s for s in base])  # median of 2x, 4x, 4x, 4x
    # another torch: the earlier profiles no longer describe the device
    device = profiles.record_profile(
        device=device, profile=_scaled(9.0, torch="9.9", profiled_at="2026-01-08")
    )
    assert len(device.profile_history) == 1 and _linear(device) == pytest.approx([9 * s for s in base])
    device.refresh_from_db()
    assert device.torch_version == "9.9" and len(device.profile_history) == 1


def _linear_of(profile: DeviceProfile) -> list[float]:
    return [s for _, s in profile["threads"]["1"]["linear"]]


def test_a_device_profiled_only_under_contention_keeps_that_profile_alone() -> None:
    contended = [{"code": "runnable", "text": "others ran"}]
    device = _device("busy")
    device = profiles.record_profile(device=device, profile=_scaled(5.0, unreliable_reasons=contended))
    assert _linear(device) == pytest.approx([5 * s for s in _linear_of(_scaled(1.0))])
    assert device.profile is not None and device.profile["unreliable_reasons"] == contended


def _job(user: Any, spec: dict[str, Any], device: Device, status: str) -> CalibrationJob:
    return CalibrationJob.objects.create(
        owner=user,
        recommendation=services.advise(owner=user, spec=spec),
        device=device,
        batch_sizes=[16],
        threads=[1],
        time_limit_seconds=60,
        status=status,
    )


@pytest.mark.parametrize(
    ("age_s", "untrusted", "earlier", "queued", "every", "due"),
    [
        (100.0, False, 2, False, 3600.0, False),  # profiled 100 s ago, three trusted profiles
        (4000.0, False, 2, False, 3600.0, True),
        (1000.0, False, 2, False, 3600.0, False),
        (1000.0, False, 0, False, 3600.0, True),  # fewer than three trusted: a quarter of the wait
        (1000.0, True, 2, False, 3600.0, True),  # the latest was under contention: a quarter too
        (800.0, True, 2, False, 3600.0, False),
        (4000.0, False, 2, True, 3600.0, False),  # a job waits: jobs first
        (4000.0, False, 2, False, 0.0, False),  # re-profiling off
    ],
)
def test_a_worker_profiles_its_device_again_when_due_and_idle(
    user: Any,
    tabular_spec: dict[str, Any],
    age_s: float,
    untrusted: bool,
    earlier: int,
    queued: bool,
    every: float,
    due: bool,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    device = _device("due")
    for i in range(earlier):  # trusted profiles taken before, a day apart
        taken = (now - timedelta(days=earlier - i)).isoformat()
        device = profiles.record_profile(device=device, profile=_scaled(1.0, profiled_at=taken))
    taken = (now - timedelta(seconds=age_s)).isoformat()
    reasons = [{"code": "steal", "text": "the hypervisor"}] if untrusted else []
    device = profiles.record_profile(
        device=device, profile=_scaled(1.0, profiled_at=taken, unreliable_reasons=reasons)
    )
    if queued:
        _job(user, tabular_spec, device, CalibrationJob.QUEUED)
    assert workers.reprofile_due(device, now=now, every=every) is due
    sent: dict[str, float] = {}
    assert workers.reprofile_idle(device_ids=[device.pk], now=now, every=every, sent=sent) == (
        [device.pk] if due else []
    )
    # asked once: not again on the next beats, until a retry's wait has passed
    assert workers.reprofile_idle(device_ids=[device.pk], now=now, every=every, sent=sent) == []


def test_a_refresh_waits_for_the_jobs_of_its_device(user: Any, tabular_spec: dict[str, Any]) -> None:
    device = _device("refresh", dict(synthetic_profile()))
    _job(user, tabular_spec, device, CalibrationJob.RUNNING)
    assert tasks.refresh_profile(device.pk) is None  # not profiled beside a running job
    device.refresh_from_db()
    assert device.profile_history == []
