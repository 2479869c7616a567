"""The selectors: every read of the pages and the API (the probe's: advisor/probe/queries.py). Views call
these and services (advisor/services.py) do the writes; no view queries the ORM itself.

Everyone sees their own rows, staff see all (models.visible_to, the one ownership rule). Every list is
paginated and fetches its related rows in the same query, so a page costs a fixed number of queries however
long the history is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.core.paginator import Page, Paginator
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from advisor import advice, contract, engine
from advisor.contract import Candidate, Estimate
from advisor.engine.measured import DataParallelRun
from advisor.ids import id_or
from advisor.models import CalibrationJob, Device, DeviceJob, Recommendation, online_since, visible_to
from advisor.probe.models import ProbeJob
from advisor.probe.queries import latest_probe_estimates

PAGE_SIZE = 20
MAX_COMPARED_CANDIDATES = 5  # the engine lists at most a handful of alternatives


def visible_recommendations(user: Any) -> QuerySet[Recommendation]:
    return visible_to(user, Recommendation.objects.select_related("owner"))


def visible_calibrations(user: Any) -> QuerySet[CalibrationJob]:
    return visible_to(user, CalibrationJob.objects.select_related("device", "owner"))


def listed_calibrations(
    user: Any, *, statuses: list[str] | None = None, recommendation: int | None = None
) -> QuerySet[CalibrationJob]:
    """The calibrations the API serves (their measurements with them), only those in `statuses` or of one
    recommendation where asked."""
    jobs = visible_calibrations(user).prefetch_related("measurements")
    if statuses:
        jobs = jobs.filter(status__in=statuses)
    if recommendation is not None:
        jobs = jobs.filter(recommendation_id=recommendation)
    return jobs


def recommendation_for(user: Any, pk: int) -> Recommendation | None:
    return visible_recommendations(user).filter(pk=pk).first()


def calibration_for(user: Any, pk: int) -> CalibrationJob | None:
    return (
        visible_calibrations(user)
        .select_related("recommendation")
        .prefetch_related("measurements")
        .filter(pk=pk)
        .first()
    )


def paginate(queryset: QuerySet[Any], page: str | int | None, per_page: int = PAGE_SIZE) -> Page[Any]:
    """A page of the queryset; a page number past the end or not a number gives the nearest real page."""
    return Paginator(queryset, per_page).get_page(page)


def _listed(queryset: QuerySet[Recommendation]) -> QuerySet[Recommendation]:
    """A recommendation as a list shows it: a few keys of its JSON, read by the database, not the whole
    answer (tens of kB for a published network) decoded in Python for each row."""
    return queryset.defer("spec", "result").annotate(
        task=KT("spec__task"),
        examples=KT("spec__data__examples"),
        family0=KT("result__candidates__0__family"),
        depth0=KT("result__candidates__0__depth"),
    )


def recommendation_history(user: Any, page: str | int | None) -> Page[Any]:
    # A correlated count, evaluated only for the page's rows; a JOIN with GROUP BY would group every row of
    # the user's history by all its columns, JSON included.
    calibrations = (
        CalibrationJob.objects.filter(recommendation=OuterRef("pk"))
        .order_by()
        .values("recommendation")
        .annotate(n=Count("id"))
        .values("n")
    )
    # Page over ids alone (an index scan), then read only that page's rows: an OFFSET deep into the
    # history would otherwise make the database evaluate the JSON keys of every row it skips.
    found = paginate(visible_recommendations(user).values_list("id", flat=True), page)
    ids = list(found.object_list)
    rows = _listed(Recommendation.objects.select_related("owner").filter(pk__in=ids)).annotate(
        calibration_count=Coalesce(Subquery(calibrations, output_field=IntegerField()), Value(0))
    )
    by_id = {row.pk: row for row in rows}
    found.object_list = [by_id[pk] for pk in ids if pk in by_id]
    return found


def calibration_history(user: Any, page: str | int | None) -> Page[Any]:
    # The recommendation's JSON result is large: the list needs only its id.
    return paginate(visible_calibrations(user).defer("summary"), page)


def latest_hardware(user: Any) -> dict[str, Any] | None:
    """The hardware of the user's own newest recommendation: the wizard's next task starts from it."""
    spec = (
        Recommendation.objects.filter(owner=user)
        .order_by("-created_at", "-id")
        .values_list("spec", flat=True)
        .first()
    )
    hardware = (spec or {}).get("hardware")
    return dict(hardware) if isinstance(hardware, dict) else None


def recent_recommendations(user: Any, limit: int = 5) -> list[Recommendation]:
    return list(_listed(visible_recommendations(user))[:limit])


def calibrations_of(recommendation: Recommendation, user: Any, limit: int = 20) -> list[CalibrationJob]:
    return list(
        visible_to(user, recommendation.calibrations.select_related("device").defer("summary"))[:limit]
    )


def compare_choices(
    user: Any, kind: str, limit: int = 20, *, family: Callable[[str, str], str] = lambda f, d: f"{f} ({d})"
) -> list[tuple[str, str]]:
    """Compare-page options: candidates of recent recommendations, or recent finished calibrations; a
    candidate is named by `family(family, depth)` (the pages expand the engine's short names)."""
    if kind == "devices":
        jobs = visible_calibrations(user).defer("summary").filter(status=CalibrationJob.SUCCEEDED)[:limit]
        return [(str(job.pk), f"calibration #{job.pk} on {job.device_id} ({job.status})") for job in jobs]
    keys = {f"f{i}": KT(f"result__candidates__{i}__family") for i in range(MAX_COMPARED_CANDIDATES)}
    keys |= {f"d{i}": KT(f"result__candidates__{i}__depth") for i in range(MAX_COMPARED_CANDIDATES)}
    candidates = []
    for values in visible_recommendations(user).values("id", **keys)[:limit]:
        row: dict[str, Any] = dict(values)
        for i in range(MAX_COMPARED_CANDIDATES):
            if row[f"f{i}"]:
                label = f"#{row['id']} candidate {i + 1}: {family(row[f'f{i}'], row[f'd{i}'])}"
                candidates.append((f"{row['id']}:{i}", label))
    return candidates


def candidate_ref(user: Any, ref: str) -> tuple[Recommendation, int] | None:
    """'17:1' -> (recommendation 17, candidate index 1) when the user may see it and it exists."""
    rec_text, _, index_text = ref.partition(":")
    pk, index = id_or(rec_text, None), id_or(index_text, None, least=0)
    rec = None if pk is None or index is None else recommendation_for(user, pk)
    if rec is None or index is None or index >= len(rec.result.get("candidates", [])):
        return None
    return rec, index


def online_devices() -> list[Device]:
    """The devices whose worker beat lately (Device.online, asked of the database)."""
    return list(Device.objects.filter(last_seen__gt=online_since()))


def all_devices() -> list[Device]:
    return list(Device.objects.all())


def device(pk: str) -> Device | None:
    return Device.objects.filter(pk=pk).first()


def allocator_finding(rec: Recommendation, index: int) -> tuple[int, dict[str, Any]] | None:
    """(calibration id, its `summary.allocator`) of the candidate's newest finished CPU calibration whose
    sweep re-measured the allocator (`checked`), or None."""
    jobs = rec.calibrations.filter(
        status=CalibrationJob.SUCCEEDED, candidate=index, device__kind="cpu", summary__has_key="allocator"
    ).order_by("-finished_at")
    for job in jobs.only("pk", "summary")[:20]:
        finding = (job.summary or {}).get("allocator") or {}
        if finding.get("checked"):
            return job.pk, dict(finding)
    return None


def queued_jobs(owner: Any) -> int:
    """The owner's queued jobs of every kind (services.queued_refusal bounds them)."""
    return sum(
        model._default_manager.filter(owner=owner, status=DeviceJob.QUEUED).count()
        for model in (CalibrationJob, ProbeJob)
    )


def host_cpu(of: Device) -> Device | None:
    """The CPU device of the device's host: itself for a CPU."""
    return of if of.kind == "cpu" else Device.objects.filter(host=of.host, kind="cpu").first()


# --- what a recommendation is served as ------------------------------------------------------------------


def recommendation_payload(rec: Recommendation, *, measured_too: bool = True) -> contract.Recommendation:
    """The contract's Recommendation, with each candidate's estimate replaced by its latest measured one
    (measured_too=False skips that look-up, for a recommendation just created: nothing measured it yet)."""
    stored = cast(contract.Recommendation, rec.result)  # as engine.recommend made it
    # Recommendations stored before plausibility warnings existed have none.
    payload: contract.Recommendation = {
        "id": rec.pk,
        "engine_version": rec.engine_version,
        "warnings": [],
        **stored,
    }
    if not measured_too:
        return _with_intervals(payload)
    measured = latest_measured_estimates(rec)
    probed = latest_probe_estimates(rec)
    scaled = data_parallel_measurements(rec)
    if measured or probed or scaled:
        candidates: list[Candidate] = []
        for i, cand in enumerate(payload["candidates"]):
            cand = {**cand, "estimate": measured[i]} if i in measured else cand
            if i in scaled:  # several devices timed with the scaling a data-parallel calibration measured
                estimate = engine.with_measured_scaling(payload, i, cand["estimate"].copy(), scaled[i])
                cand = {**cand, "estimate": estimate}
            if i in probed:
                cand = {**cand, "accuracy_probe": probed[i]}
            candidates.append(cand)
        payload["candidates"] = candidates
    if 0 in measured:  # the plan and the first candidate's batch follow what its calibration measured
        payload = engine.follow_measurement(payload, measured[0].copy())
    return _with_intervals(payload)


def _with_intervals(payload: contract.Recommendation) -> contract.Recommendation:
    """Every candidate's estimate with its 90% interval: estimates stored before intervals get their
    basis's."""
    device = str(payload["hardware_plan"].get("device", "cpu"))
    if all("interval" in c.get("estimate", {}) for c in payload["candidates"]):
        return payload
    candidates: list[Candidate] = [
        {**c, "estimate": engine.with_interval(c["estimate"].copy(), device)} if c.get("estimate") else c
        for c in payload["candidates"]
    ]
    return {**payload, "candidates": candidates}


def latest_measured_estimates(rec: Recommendation) -> dict[int, Estimate]:
    jobs = rec.calibrations.filter(status=CalibrationJob.SUCCEEDED, estimate__isnull=False).order_by(
        "finished_at"
    )
    return {job.candidate: cast(Estimate, {**(job.estimate or {}), "calibration": job.pk}) for job in jobs}


def data_parallel_measurements(rec: Recommendation) -> dict[int, list[DataParallelRun]]:
    """Each candidate's finished data-parallel calibrations, oldest first, as engine.with_measured_scaling
    takes them; none looked up for a plan on one device, where no scaling applies."""
    if engine.data_parallel_devices(rec.result["hardware_plan"]) <= 1:
        return {}
    jobs = (
        rec.calibrations.filter(status=CalibrationJob.SUCCEEDED, summary__has_key="data_parallel")
        .select_related("device")
        .order_by("finished_at")
    )
    found: dict[int, list[DataParallelRun]] = {}
    for job in jobs:
        rows = (job.summary or {}).get("data_parallel") or []
        if rows and not job.options.get("spread"):  # a spread job holds its one world size's row only
            entry: DataParallelRun = {
                "calibration": job.pk,
                "device": job.device_id,
                "kind": job.device.kind,
                "rows": rows,
            }
            found.setdefault(job.candidate, []).append(entry)
    return found


def seconds_per_epoch(
    rec: Recommendation, index: int | None, device: Device | None = None
) -> dict[str, Any] | None:
    """The candidate's time per epoch: measured where a calibration finished, else from the profile of the
    device the probe runs on (issue 12: never the catalog's figure where a profile exists), else the
    recommendation's own estimate."""
    if index is None:
        return None
    candidates = recommendation_payload(rec)["candidates"]
    if index >= len(candidates):
        return None
    estimate = candidates[index]["estimate"]
    if estimate.get("basis") == "catalog" and device is not None and device.profile:
        estimate = advice.recommend(rec.spec, device)["candidates"][index]["estimate"]
    if estimate.get("seconds_per_epoch") is None:  # stored by an older engine
        return None
    return {"seconds": float(estimate["seconds_per_epoch"]), "basis": estimate.get("basis", "catalog")}


def host_gpus(device: Device) -> int:
    """The GPUs a GPU device's worker sees (`details.host_gpus`, from torch.cuda.device_count() when it
    registered); for a row registered before that was recorded, the GPU rows announced from its host."""
    recorded = (device.details or {}).get("host_gpus")
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded >= 1:
        return recorded
    return max(1, Device.objects.filter(host=device.host, kind=device.kind).count())
