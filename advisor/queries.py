"""The selectors: every read of the pages and the API (the probe's: advisor/probe/queries.py). Views call
these and services (advisor/services.py) do the writes; no view queries the ORM itself.

Everyone sees their own rows, staff see all (models.visible_to, the one ownership rule). Every list is
paginated and fetches its related rows in the same query, so a page costs a fixed number of queries however
long the history is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from advisor.ids import id_or
from advisor.models import CalibrationJob, Device, Recommendation, online_since, visible_to

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


def host_cpu(of: Device) -> Device | None:
    """The CPU device of the device's host: itself for a CPU."""
    return of if of.kind == "cpu" else Device.objects.filter(host=of.host, kind="cpu").first()
