"""The probe's use cases: keep or delete a data sample, queue, cancel and publish probe jobs. Views, the API
and the Celery task call these; they do all the writes."""

from __future__ import annotations

import errno
import logging
import uuid

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile

from advisor import forecasts
from advisor import services as core
from advisor.engine.remaining import plan_to_json
from advisor.engine.variation import CannotVary, describe, vary
from advisor.jobs import Conflict as Conflict  # callers catch it as services.Conflict
from advisor.jobs import JobKind, JobRefused, cancel, count_refusal, queue
from advisor.models import Device, Recommendation
from advisor.probe import conf
from advisor.probe.fit import fit_errors, pick_candidates, probe_fit, probeable
from advisor.probe.learning import samples
from advisor.probe.learning.samples import SampleError
from advisor.probe.learning.uploads import parse_upload, too_big
from advisor.probe.models import DataSample, ProbeJob

log = logging.getLogger(__name__)


class ProbeRefused(JobRefused):
    """A probe request that must not be queued; `.errors` names the offending fields."""


# A probe runs advisor.run_probe (advisor/probe/tasks.py) on its device's own queue, shared with
# calibrations so a probe and a calibration never run on one device at once; an orphan is re-queued once.
# Celery's own limits are a backstop above every kind's (core.message_limits).
PROBES: JobKind[ProbeJob] = JobKind(
    ProbeJob, noun="probe", task="advisor.run_probe", max_attempts=lambda: 2, send_options=core.message_limits
)


# --- samples -----------------------------------------------------------------------------------------------


def create_sample(
    *,
    owner: User,
    upload: UploadedFile[bytes] | None = None,
    demo: str = "",
    name: str = "",
    label_column: str = "",
    recommendation: Recommendation | None = None,
) -> DataSample:
    """Read and check the whole sample in memory, then store it (file first, then row; the file goes again if
    the row cannot be written): a refused or failed upload leaves nothing behind. Raises SampleError."""
    if (upload is None) == (not demo):
        raise SampleError({"file": ["send either a file or the name of a demo data set"]})
    if DataSample.objects.filter(owner=owner).count() >= conf.value("SAMPLES_PER_USER"):
        raise SampleError(
            {"file": [f"you keep {conf.value('SAMPLES_PER_USER')} samples already; delete one first"]}
        )
    limits = conf.limits()
    if upload is not None:
        if upload.size is not None and upload.size > limits.max_bytes:
            raise SampleError({"file": [too_big(upload.size, limits.max_bytes)]})
        original = (upload.name or "upload")[-255:]
        data = upload.read(limits.max_bytes + 1)
        sample = parse_upload(original, data, label_column=label_column, limits=limits)
        fmt = original.rsplit(".", 1)[-1].lower()
        upload_bytes = len(data)
    else:
        sample = samples.demo(demo)
        original, fmt, upload_bytes = demo, "demo", 0
        label_column = ""
    if recommendation is not None:
        errors = fit_errors(facts=sample.describe(), spec=recommendation.spec)
        if errors:
            raise SampleError(errors)
    rel = f"{owner.pk}/{uuid.uuid4().hex}.npz"
    path = conf.samples_root() / rel
    try:
        size = samples.save(sample, path)  # atomic: a failed write leaves no partial file
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise samples.StorageFull(
                {"file": ["the server's sample storage is full, so the sample was not kept; try again later"]}
            ) from exc
        raise
    try:
        return DataSample.objects.create(
            owner=owner,
            name=(name.strip() or original)[:200],
            format=fmt,
            original_name=original,
            label_column=label_column[:200],
            path=rel,
            size_bytes=size,
            upload_bytes=upload_bytes,
            examples=sample.examples,
            input_shape=sample.input_shape,
            label_kind=sample.label_kind,
            outputs=sample.outputs,
            info=sample.describe(),
        )
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def delete_sample(*, sample: DataSample) -> None:
    if sample.probes.exclude(status__in=ProbeJob.FINISHED).exists():
        raise Conflict("a queued or running probe still uses this sample; cancel it first")
    sample.delete()  # its file goes after the commit (advisor/probe/signals.py)


# --- probe jobs --------------------------------------------------------------------------------------------


def submit_probe(
    *,
    owner: User,
    recommendation: Recommendation,
    sample: DataSample,
    device: Device,
    time_limit_seconds: int | None = None,
    roles: tuple[int | None, int | None] | None = None,
    previous: ProbeJob | None = None,
    variation: dict[str, float] | None = None,
) -> ProbeJob:
    """Queue a probe of the recommendation's first shallow and first deep candidate (net.shallow.first), or
    of `roles` (shallow index, deep index) for the next step of `previous`, its candidate changed by
    `variation` where the step proposed one (advisor/engine/variation.py). Raises ProbeRefused."""
    limit = time_limit_seconds or conf.value("PROBE_DEFAULT_SECONDS")
    errors: dict[str, list[str]] = {}
    if not device.online:
        errors["device"] = [
            f"device {device.id} is offline (its worker has not been seen since {device.last_seen})"
        ]
    if not 1 <= limit <= conf.value("PROBE_MAX_SECONDS"):
        errors["time_limit_seconds"] = [f"must be from 1 to {conf.value('PROBE_MAX_SECONDS')} seconds"]
    try:
        stored = samples.load(sample.file)
    except (OSError, ValueError):
        errors["sample"] = ["the sample's file cannot be read any more; upload it again"]
        errors.update(probe_fit(facts=None, recommendation=recommendation))
    else:
        errors.update(probe_fit(facts=stored.describe(), recommendation=recommendation))
    active = ProbeJob.objects.filter(owner=owner).exclude(status__in=ProbeJob.FINISHED).count()
    if active >= conf.value("PROBES_ACTIVE_PER_USER"):
        errors["probe"] = [
            f"you have {active} probes queued or running; wait for one to finish or cancel one"
        ]
    errors.update(core.queued_refusal(owner))
    if errors:
        count_refusal("probe", errors)
        raise ProbeRefused(errors)
    job = ProbeJob(owner=owner, recommendation=recommendation, sample=sample, device=device)
    shallow, deep = roles or pick_candidates(recommendation)
    job.shallow_candidate, job.deep_candidate, job.time_limit_seconds = shallow, deep, limit
    job.previous, job.variation = previous, dict(variation or {})
    job.work_plan = plan_to_json(forecasts.probe_plan(time_limit_seconds=limit))
    return queue(PROBES, job)


def submit_next(*, owner: User, job: ProbeJob) -> tuple[ProbeJob, bool]:
    """Run the next step a finished probe's verdict proposes (`verdict.next.candidate`) as a new probe of the
    same recommendation, sample, device and time limit, recording `job` as its `previous`. Once per probe: a
    second call answers the next probe already queued, running or done (created False). Raises
    ProbeRefused (400) with the probes' usual field messages."""
    existing = (
        job.next_probes.exclude(status__in=(ProbeJob.FAILED, ProbeJob.CANCELLED)).order_by("pk").first()
    )
    if existing is not None:
        return existing, False
    step = (job.verdict or {}).get("next") or {}
    errors: dict[str, list[str]] = {}
    if not job.finished:
        errors["probe"] = [f"probe {job.pk} has not finished: its next step is known once it has"]
    elif step.get("candidate") is None:
        why = step.get("reason") or "it met its target or trained no network"
        errors["probe"] = [f"probe {job.pk} proposes no candidate to probe next: {why}"]
    if job.sample is None:
        errors["sample"] = ["the probe's sample was deleted; upload it again and start a new probe"]
    index: int | None = step.get("candidate")
    if not errors and index not in probeable(job.recommendation):
        errors["probe"] = [f"candidate {(index or 0) + 1} cannot be probed on this server"]
    variation = dict(step.get("variation") or {})
    if not errors and variation:
        errors.update(_variation_errors(job, int(index or 0), variation))
    if errors:
        count_refusal("probe", errors)
        raise ProbeRefused(errors)
    assert job.sample is not None and index is not None
    depth = job.recommendation.result["candidates"][index].get("depth")
    roles = (index, None) if depth == "shallow" else (None, index)
    # the same recommendation, sample, device and time limit as the probe it follows
    rec, sample, device, limit = job.recommendation, job.sample, job.device, job.time_limit_seconds
    new = submit_probe(
        owner=owner, recommendation=rec, sample=sample, device=device, time_limit_seconds=limit,
        roles=roles, previous=job, variation=variation,
    )  # fmt: skip
    return new, True


def _variation_errors(job: ProbeJob, index: int, variation: dict[str, float]) -> dict[str, list[str]]:
    """What stops the step's changed candidate being probed here: a change it cannot take, or more
    parameters than the server's cap (PROBE_MAX_PARAMETERS) once changed."""
    try:
        varied = vary(job.recommendation.result["candidates"][index], variation)
    except CannotVary as exc:
        return {"probe": [f"candidate {index + 1} cannot be changed so ({describe(variation)}): {exc}"]}
    cap = conf.value("PROBE_MAX_PARAMETERS")
    if int(varied["parameters"]) > cap:
        return {
            "probe": [
                f"candidate {index + 1} with {describe(variation)} has {varied['parameters']:,} parameters, "
                f"above this server's probe cap of {cap:,} (PROBE_MAX_PARAMETERS)"
            ]
        }
    return {}


def publish(job: ProbeJob) -> bool:
    """Hand the job to the broker on its device's queue (see jobs.send); unsent jobs stay queued."""
    return PROBES.publish(job)


def cancel_probe(*, job: ProbeJob) -> ProbeJob:
    """Queued: cancelled at once and its task revoked. Running: the runner stops the training process at its
    next check, keeping what was measured. Finished: Conflict (jobs.JobFinished)."""
    return cancel(PROBES, job)
