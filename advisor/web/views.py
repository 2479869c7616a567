"""Pages: parse, call a service, render. One template serves the page and its htmx fragment."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from advisor import engine, services
from advisor.models import CalibrationJob, Device, Recommendation

EXAMPLE_SPEC = {
    "task": "tabular",
    "goal": "classify",
    "data": {"examples": 20000, "input_shape": [32], "outputs": 4},
    "hardware": {"cpu_cores": 2, "ram_gb": 16},
    "target": {"accuracy": 0.9},
}


def _own(queryset: QuerySet[Recommendation] | QuerySet[CalibrationJob], request: HttpRequest):  # type: ignore[no-untyped-def]
    return queryset if request.user.is_staff else queryset.filter(owner=request.user)


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    recs = _own(Recommendation.objects.all(), request)[:20]
    return render(
        request, "advisor/home.html", {"recs": recs, "spec_text": json.dumps(EXAMPLE_SPEC, indent=2)}
    )


@require_POST
@login_required
def recommend(request: HttpRequest) -> HttpResponse:
    text = request.POST.get("spec", "")
    errors: dict[str, list[str]] = {}
    try:
        spec = json.loads(text)
        rec = services.advise(owner=request.user, spec=spec)
    except json.JSONDecodeError as exc:
        errors = {"spec": [f"not valid JSON: {exc}"]}
    except engine.SpecError as exc:
        errors = exc.errors
    if errors:
        recs = _own(Recommendation.objects.all(), request)[:20]
        context = {"recs": recs, "spec_text": text, "errors": errors}
        return render(request, "advisor/home.html", context, status=400)
    return redirect("recommendation", pk=rec.pk)


@require_GET
@login_required
def recommendation(request: HttpRequest, pk: int) -> HttpResponse:
    rec = get_object_or_404(_own(Recommendation.objects.all(), request), pk=pk)
    context = {
        "rec": rec,
        "payload": services.recommendation_payload(rec),
        "devices": [d for d in Device.objects.all() if d.online],
        "jobs": rec.calibrations.select_related("device")[:20],
    }
    return render(request, "advisor/recommendation.html", context)


@require_POST
@login_required
def calibrate(request: HttpRequest, pk: int) -> HttpResponse:
    rec = get_object_or_404(_own(Recommendation.objects.all(), request), pk=pk)
    device = get_object_or_404(Device, pk=request.POST.get("device", ""))
    try:
        job, _ = services.submit_calibration(
            owner=request.user,
            recommendation=rec,
            candidate=int(request.POST.get("candidate", "0") or 0),
            device=device,
        )
    except (services.CalibrationRefused, ValueError) as exc:
        return HttpResponse(f"Calibration refused: {exc}", status=400)
    return redirect("calibration", pk=job.pk)


@require_http_methods(["GET"])
@login_required
def calibration(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(
        _own(CalibrationJob.objects.select_related("device", "recommendation"), request), pk=pk
    )
    context = {"job": job, "measurements": job.measurements.all()}
    if request.htmx:
        response = render(request, "advisor/calibration.html#status", context)
        return HttpResponseStopPolling(response.content) if job.finished else response
    return render(request, "advisor/calibration.html", context)
