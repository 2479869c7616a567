"""The probe's pages: choose or upload a sample and start a probe from a recommendation; the probe page (htmx
polling until done) with the verdict, the learning curve and the per-epoch scores; the user's samples."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from advisor.accounts import signed_in
from advisor.ids import id_or
from advisor.models import Recommendation
from advisor.probe import conf, queries, services
from advisor.probe.fit import facts_of, pick_candidates, probe_fit
from advisor.probe.forms import ProbeForm, SampleForm
from advisor.probe.generation_views import generation_page, is_generation
from advisor.probe.learning.curve import CurveFit
from advisor.probe.learning.samples import SampleError
from advisor.probe.learning.verdict import interval_words
from advisor.probe.models import ProbeJob
from advisor.queries import online_devices, paginate, recommendation_for
from advisor.web.auth import HtmxHttpRequest, login_required, visible
from advisor.web.charts import probe_charts
from advisor.web.history import history_tab
from advisor.web.jobs import eta
from advisor.web.partial import job_page


def _why_not(errors: dict[str, list[str]]) -> str:
    return "; ".join(text for texts in errors.values() for text in texts)


def _page(
    request: HttpRequest,
    rec: Recommendation,
    *,
    sample_form: SampleForm | None = None,
    probe_form: ProbeForm | None = None,
    status: int = 200,
    selected: int | None = None,
) -> HttpResponse:
    samples = queries.own_samples(signed_in(request.user))
    devices = online_devices()
    initial = {"sample": selected} if selected else {}
    shallow, deep = pick_candidates(rec)
    candidates = rec.result.get("candidates", [])
    misfits = {s.pk: _why_not(probe_fit(facts=facts_of(s), recommendation=rec)) for s in samples}
    misfits = {pk: why for pk, why in misfits.items() if why}
    context = {
        "rec": rec,
        "samples": samples,
        "fitting": [s for s in samples if s.pk not in misfits],
        "misfits": [(s, misfits[s.pk]) for s in samples if s.pk in misfits],
        "devices": devices,
        "sample_form": sample_form or SampleForm(spec=rec.spec),
        "probe_form": probe_form
        or ProbeForm(initial=initial, samples=samples, devices=devices, misfits=misfits),
        "shallow": None if shallow is None else {"index": shallow, **candidates[shallow]},
        "deep": None if deep is None else {"index": deep, **candidates[deep]},
        "probes": queries.own_probes(rec, signed_in(request.user)),
        "max_bytes": conf.value("SAMPLE_MAX_BYTES"),
    }
    return render(request, "probe/new.html", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def new_probe(request: HttpRequest, pk: int) -> HttpResponse:
    rec = visible(recommendation_for(request.user, pk), "recommendation")
    if request.method == "GET":
        return _page(request, rec, selected=id_or(request.GET.get("sample"), None))
    samples = queries.own_samples(signed_in(request.user))
    devices = online_devices()
    misfits = {s.pk: _why_not(probe_fit(facts=facts_of(s), recommendation=rec)) for s in samples}
    form = ProbeForm(
        request.POST, samples=samples, devices=devices, misfits={k: v for k, v in misfits.items() if v}
    )
    if not form.is_valid():
        return _page(request, rec, probe_form=form, status=400)
    data = form.cleaned_data
    try:
        job = services.submit_probe(
            owner=signed_in(request.user),
            recommendation=rec,
            sample=next(s for s in samples if s.pk == data["sample"]),
            device=next(d for d in devices if d.id == data["device"]),
            time_limit_seconds=data["time_limit_seconds"],
        )
    except services.ProbeRefused as exc:
        for field, texts in exc.errors.items():
            form.add_error(None, f"{field}: {' '.join(texts)}")
        return _page(request, rec, probe_form=form, status=400)
    return redirect("probe", pk=job.pk)


@require_POST
@login_required
def add_sample(request: HttpRequest, pk: int) -> HttpResponse:
    rec = visible(recommendation_for(request.user, pk), "recommendation")
    form = SampleForm(request.POST, request.FILES, spec=rec.spec)
    if not form.is_valid():
        return _page(request, rec, sample_form=form, status=400)
    data = form.cleaned_data
    try:
        sample = services.create_sample(
            owner=signed_in(request.user),
            upload=data.get("file"),
            demo=data.get("demo") or "",
            name=data.get("name") or "",
            label_column=data.get("label_column") or "",
            recommendation=rec,
        )
    except SampleError as exc:
        for field, texts in exc.errors.items():
            form.add_error(None, f"{field}: {' '.join(texts)}")
        return _page(request, rec, sample_form=form, status=400)
    messages.success(request, f"Sample “{sample.name}” kept: {sample.examples} examples.")
    return redirect(f"{reverse('probe-new', args=[rec.pk])}?sample={sample.pk}")


@require_GET
@login_required
def probe(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    job = visible(queries.probe_for(request.user, pk), "probe")
    if is_generation(job):  # a generator's probe: its two-sample score, on a page of its own
        return generation_page(request, job)
    target = (job.recommendation.spec.get("target") or {}).get("accuracy")
    curve: CurveFit | None = job.results.get("curve")
    followed_by = list(job.next_probes.order_by("pk"))
    chain = [*job.chain(), *followed_by]
    context = {
        "job": job,
        "variation": job.variation_text,  # its candidate's change, as its next step proposed it
        "chain": [_link(p, current=p.pk == job.pk) for p in chain] if len(chain) > 1 else [],
        # the next step already started (one that failed or was cancelled can be started again)
        "next_probe": next(
            (p for p in followed_by if p.status not in (ProbeJob.FAILED, ProbeJob.CANCELLED)), None
        ),
        "expected_words": interval_words(curve) if curve and curve.get("estimate") is not None else "",
        "results": job.results,
        "verdict": job.verdict,
        "charts": probe_charts(job.results, target),
        "target": target,
        "eta": eta("probe", job),
    }
    return job_page(request, "probe/probe.html", context, finished=job.finished)


def _link(job: ProbeJob, *, current: bool) -> dict[str, Any]:
    """One probe of a chain as the probe page lists it: its candidates (numbered from 1), changed as its
    variation says, and its score."""
    names = [f"candidate {i + 1}" for i in (job.shallow_candidate, job.deep_candidate) if i is not None]
    verdict = job.verdict or {}
    return {
        "pk": job.pk,
        "current": current,
        "label": (" then ".join(names) or "no candidate")
        + (f" ({job.variation_text})" if job.variation else ""),
        "score": job.score,
        "met": verdict.get("met"),
        "status": job.status,
    }


@require_POST
@login_required
def next_probe(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The button under a verdict that missed its target: its proposed candidate as the next probe (once: a
    second click opens the same one). Refused: back to the probe's page with the reasons."""
    job = visible(queries.probe_for(request.user, pk), "probe")
    try:
        job, _ = services.submit_next(owner=signed_in(request.user), job=job)
    except services.ProbeRefused as exc:
        for field, texts in exc.errors.items():
            messages.error(request, f"{field}: {' '.join(texts)}")
    url = reverse("probe", args=[job.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@require_POST
@login_required
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    """Cancel a queued probe, or ask a running one to stop; a finished one says so."""
    job = visible(queries.probe_for(request.user, pk), "probe")
    try:
        services.cancel_probe(job=job)
    except services.Conflict as exc:
        messages.info(request, str(exc))
    return redirect("probe", pk=job.pk)


@require_GET
@login_required
def probe_history(request: HtmxHttpRequest) -> HttpResponse:
    """The history page's third tab (advisor/history.html): the probes, newest first."""
    return history_tab(
        request, "probes", paginate(queries.probe_history(request.user), request.GET.get("page"))
    )


@require_GET
@login_required
def sample_list(request: HttpRequest) -> HttpResponse:
    return render(request, "probe/samples.html", _samples_context(request))


def _samples_context(request: HttpRequest) -> dict[str, Any]:
    """The user's samples, each with the recommendations of theirs it can be probed with (and why not the
    others); a staff member sees everyone's samples, offered against their own recommendations."""
    rows = list(queries.visible_samples(request.user)[:100])
    return {"offers": queries.sample_offers(signed_in(request.user), rows)}


@require_POST
@login_required
def delete_sample(request: HttpRequest, pk: int) -> HttpResponse:
    """Delete a sample and, after the commit, its file. One that a queued or running probe still reads
    stays, and the list of samples says why (409)."""
    sample = visible(queries.sample_for(request.user, pk), "sample")
    try:
        services.delete_sample(sample=sample)
    except services.Conflict as exc:
        messages.error(request, str(exc))
        return render(request, "probe/samples.html", _samples_context(request), status=409)
    messages.success(request, f"Sample “{sample.name}” deleted.")
    return redirect("samples")
