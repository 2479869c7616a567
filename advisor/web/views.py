"""Recommendation and calibration pages: parse, call a service or a query, render. One template serves each
page and its htmx fragments (`template.html#partial`)."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template import TemplateDoesNotExist
from django.template.loader import get_template
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from advisor import engine, queries, services
from advisor.accounts import signed_in
from advisor.engine.rules import REFERENCES
from advisor.ids import id_or
from advisor.models import CalibrationJob, Recommendation
from advisor.web.auth import HtmxHttpRequest, login_required, visible
from advisor.web.flowfig import flow_figure
from advisor.web.forms import CalibrateForm
from advisor.web.jobs import job_view
from advisor.web.partial import job_page, page_or_fragment
from advisor.web.present import diagrams, memory_notes, memory_rows, recommendation_view


@require_GET
@login_required
def recommendation(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    rec = visible(queries.recommendation_for(request.user, pk), "recommendation")
    index = id_or(request.GET.get("c"), 0, least=0) or 0
    context = _recommendation_context(request, rec, index, form=None)
    return page_or_fragment(request, "advisor/recommendation.html", "candidate", context)


def _recommendation_context(
    request: HttpRequest, rec: Recommendation, index: int, form: CalibrateForm | None
) -> dict[str, Any]:
    view = recommendation_view(queries.recommendation_payload(rec), rec.result)
    index = min(max(index, 0), len(view["candidates"]) - 1)
    chosen = view["candidates"][index]
    chosen["diagrams"] = diagrams(chosen["c"])
    chosen["memory"] = memory_rows(chosen["c"].get("memory_bytes", {}))
    chosen["memory_notes"] = memory_notes(chosen["c"])
    devices = queries.online_devices()
    if form is None:
        form = CalibrateForm(
            devices=devices,
            initial={"candidate": index, "key": uuid.uuid4().hex},
        )
    # Blank by default: the sweep doubles from the recommended size, so the batch plot has several points.
    batch = chosen["c"]["training"]["batch_size"]
    form.fields[
        "batch_sizes"
    ].help_text = f"blank: {batch}, {2 * batch}, {4 * batch}… (doubling from the recommended {batch})"
    return {
        "rec": rec,
        "view": view,
        "chosen": chosen,
        "devices": devices,
        "form": form,
        "jobs": queries.calibrations_of(rec, request.user),
        # a generation task's probe scores its generator by the two-sample test: a section of its own
        "probe_template": _optional_template(
            GENERATION_PROBE_SECTION if rec.spec.get("task") == "generation" else PROBE_SECTION
        ),
        "flow_figure": flow_figure(rec.result["spec"], view["plan"], view["flow"]),
    }


# The accuracy probe's section of the recommendation page: its owner adds this template (templates/probe/)
# and it is drawn inside {% block probe %} with this page's context (rec, view, chosen, devices, jobs).
PROBE_SECTION = "probe/_recommendation.html"
GENERATION_PROBE_SECTION = "probe/_generation_recommendation.html"


def _optional_template(name: str) -> str | None:
    try:
        get_template(name)  # the cached loader remembers a miss too: this costs nothing after the first call
    except TemplateDoesNotExist:
        return None
    return name


@require_POST
@login_required
def calibrate(request: HttpRequest, pk: int) -> HttpResponse:
    rec = visible(queries.recommendation_for(request.user, pk), "recommendation")
    devices = queries.online_devices()
    form = CalibrateForm(request.POST, devices=devices)
    if form.is_valid():
        data = form.cleaned_data
        try:
            job, _ = services.submit_calibration(
                owner=signed_in(request.user),
                recommendation=rec,
                candidate=data["candidate"],
                device=next(d for d in devices if d.id == data["device"]),
                batch_sizes=data["batch_sizes"] or [],
                threads=data["threads"] or [],
                time_limit_seconds=data["time_limit_seconds"],
                idempotency_key=f"web-{data['key']}" if data.get("key") else "",
            )
        except services.CalibrationRefused as exc:
            for field, messages in exc.errors.items():
                for message in messages:
                    form.add_error(field if field in form.fields else None, message)
        else:
            return redirect("calibration", pk=job.pk)
    index = form.cleaned_data.get("candidate") or 0
    context = _recommendation_context(request, rec, index, form=form)
    return render(request, "advisor/recommendation.html", context, status=400)


@require_GET
@login_required
def calibration(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = visible(queries.calibration_for(request.user, pk), "calibration")
    context = {"job": job, "v": job_view(job)}
    return job_page(request, "advisor/calibration.html", context, finished=job.finished)


@require_POST
@login_required
def cancel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = visible(queries.calibration_for(request.user, pk), "calibration")
    message = ""
    try:
        job = services.cancel_calibration(job=job)
    except services.JobFinished as exc:
        message = str(exc)
    if not request.htmx:
        return redirect("calibration", pk=job.pk)
    job = queries.calibration_for(request.user, pk) or job
    context = {"job": job, "v": job_view(job), "message": message}
    response = render(request, "advisor/calibration.html#status", context)
    return HttpResponseStopPolling(response.content) if job.status in CalibrationJob.FINISHED else response


@require_POST
@login_required
def measure_again(request: HttpRequest, pk: int) -> HttpResponse:
    """The same calibration queued again (offered where a sweep measured unreliably): its new page, or this
    one with the reason it was refused."""
    job = visible(queries.calibration_for(request.user, pk), "calibration")
    try:
        again = services.measure_again(owner=signed_in(request.user), job=job)
    except services.CalibrationRefused as exc:
        message = "; ".join(m for messages in exc.errors.values() for m in messages)
        context = {"job": job, "v": job_view(job), "message": f"Not queued: {message}"}
        return render(request, "advisor/calibration.html", context, status=400)
    return redirect("calibration", pk=again.pk)


@require_GET
@login_required
def rules(request: HttpRequest) -> HttpResponse:
    return render(request, "advisor/rules.html", {"rules": engine.rules(), "references": REFERENCES})
