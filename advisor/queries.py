"""Read-only queries the pages need: whose rows a user may see, history pages, compare choices.

Everyone sees their own recommendations and calibrations; staff see all. Every list is paginated and fetches
its related rows in the same query, so a page costs a fixed number of queries however long the history is."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, QuerySet

from advisor.models import CalibrationJob, Device, Recommendation

PAGE_SIZE = 20


def visible_recommendations(user: Any) -> QuerySet[Recommendation]:
    queryset = Recommendation.objects.select_related("owner")
    return queryset if user.is_staff else queryset.filter(owner=user)


def visible_calibrations(user: Any) -> QuerySet[CalibrationJob]:
    queryset = CalibrationJob.objects.select_related("device", "owner")
    return queryset if user.is_staff else queryset.filter(owner=user)


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


def recommendation_history(user: Any, page: str | int | None) -> Page[Any]:
    queryset = visible_recommendations(user).annotate(calibration_count=Count("calibrations"))
    # An aggregate drops Meta.ordering: order explicitly, or pages could overlap.
    queryset = queryset.order_by("-created_at", "-id")
    return paginate(queryset, page)


def calibration_history(user: Any, page: str | int | None) -> Page[Any]:
    # The recommendation's JSON result is large: the list needs only its id.
    return paginate(visible_calibrations(user).defer("summary"), page)


def recent_recommendations(user: Any, limit: int = 5) -> list[Recommendation]:
    return list(visible_recommendations(user)[:limit])


def calibrations_of(recommendation: Recommendation, user: Any, limit: int = 20) -> list[CalibrationJob]:
    jobs = recommendation.calibrations.select_related("device").defer("summary")
    if not user.is_staff:
        jobs = jobs.filter(owner=user)
    return list(jobs[:limit])


def compare_choices(user: Any, limit: int = 30) -> dict[str, list[tuple[str, str]]]:
    """Compare-page options: candidates of recent recommendations, recent finished calibrations."""
    candidates = []
    for rec in visible_recommendations(user).only("id", "result", "created_at", "owner")[:limit]:
        for i, cand in enumerate(rec.result.get("candidates", [])):
            candidates.append(
                (f"{rec.pk}:{i}", f"#{rec.pk} candidate {i + 1}: {cand['family']} ({cand['depth']})")
            )
    jobs = [
        (str(job.pk), f"calibration #{job.pk} on {job.device_id} ({job.status})")
        for job in visible_calibrations(user).defer("summary").filter(status=CalibrationJob.SUCCEEDED)[:limit]
    ]
    return {"candidates": candidates, "devices": jobs}


def candidate_ref(user: Any, ref: str) -> tuple[Recommendation, int] | None:
    """'17:1' -> (recommendation 17, candidate index 1) when the user may see it and it exists."""
    rec_id, _, index = ref.partition(":")
    if not rec_id.isdigit() or not index.isdigit():
        return None
    rec = recommendation_for(user, int(rec_id))
    if rec is None or int(index) >= len(rec.result.get("candidates", [])):
        return None
    return rec, int(index)


def online_devices() -> list[Device]:
    return [d for d in Device.objects.all() if d.online]
