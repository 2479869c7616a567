"""The page of a generation probe (learning/generation.py): its generator's two-sample score against the
target, the Gaussian mixture beside it, and the validation score while it trained. The probe view hands a
generation task's probe here; the rest of the probe's pages serve both kinds."""

from __future__ import annotations

from django.http import HttpResponse

from advisor.probe.models import ProbeJob
from advisor.web.auth import HtmxHttpRequest
from advisor.web.charts import generation_chart
from advisor.web.jobs import eta
from advisor.web.partial import job_page


def is_generation(job: ProbeJob) -> bool:
    return bool(job.recommendation.spec.get("task") == "generation")


def generation_page(request: HtmxHttpRequest, job: ProbeJob) -> HttpResponse:
    target = (job.recommendation.spec.get("target") or {}).get("two_sample")
    context = {
        "job": job,
        "results": job.results,
        "verdict": job.verdict,
        "chart": generation_chart(job.results, target),
        "target": target,
        "eta": eta("probe", job),
    }
    return job_page(request, "probe/generation.html", context, finished=job.finished)
