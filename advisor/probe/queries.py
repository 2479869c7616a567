"""The probe's selectors: the samples and probes a user may see (models.visible_to), what a recommendation's
latest probes measured, and which of a user's recommendations each kept sample can probe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from advisor.contract import ProbeEstimate
from advisor.models import Recommendation, visible_to
from advisor.probe.fit import facts_of, probe_fit
from advisor.probe.models import DataSample, ProbeJob

OFFERED_RECOMMENDATIONS = 20  # the newest ones a sample is checked against on /samples/


@dataclass
class Offer:
    """One recommendation a sample could be probed with, or why it could not."""

    recommendation: Recommendation
    why_not: list[str] = field(default_factory=list)  # empty: the probe would start


@dataclass
class SampleOffers:
    sample: DataSample
    fits: list[Offer] = field(default_factory=list)
    misfits: list[Offer] = field(default_factory=list)


def visible_samples(user: Any) -> QuerySet[DataSample]:
    return visible_to(user, DataSample.objects.select_related("owner"))


def visible_probes(user: Any) -> QuerySet[ProbeJob]:
    return visible_to(user, ProbeJob.objects.select_related("recommendation", "sample", "device", "owner"))


def sample_for(user: Any, pk: int) -> DataSample | None:
    return visible_samples(user).filter(pk=pk).first()


def probe_for(user: Any, pk: int) -> ProbeJob | None:
    return visible_probes(user).filter(pk=pk).first()


def listed_probes(user: Any, *, recommendation: int | None = None) -> QuerySet[ProbeJob]:
    """The probes the API serves, only those of one recommendation where asked."""
    jobs = visible_to(user, ProbeJob.objects.all())
    return jobs if recommendation is None else jobs.filter(recommendation_id=recommendation)


def probe_history(user: Any) -> QuerySet[ProbeJob]:
    """The history page's probes (the list needs no results)."""
    return visible_to(user, ProbeJob.objects.select_related("sample", "owner").defer("results"))


def own_samples(owner: Any, limit: int = 50) -> list[DataSample]:
    """The samples the owner may probe with (their own, staff too: a probe runs on its owner's data)."""
    return list(DataSample.objects.filter(owner=owner)[:limit])


def own_probes(rec: Recommendation, owner: Any, limit: int = 20) -> list[ProbeJob]:
    return list(rec.probes.filter(owner=owner)[:limit])


def latest_probe_estimates(rec: Recommendation) -> dict[int, ProbeEstimate]:
    """Per candidate index, what its latest finished probe measured: the held-out score on the sample, the
    expected score at full size, and (where it reached the target) the epochs and seconds to the target. For
    merging into a recommendation's estimates (the time to train at the accuracy target)."""
    found: dict[int, ProbeEstimate] = {}
    for job in rec.probes.filter(status=ProbeJob.SUCCEEDED, verdict__isnull=False).order_by("finished_at"):
        verdict = job.verdict or {}
        for role, index in (("shallow", job.shallow_candidate), ("deep", job.deep_candidate)):
            score = verdict.get(f"{role}_score")
            if index is None or score is None:
                continue
            entry: ProbeEstimate = {"probe": job.pk, "score": score, "metric": verdict.get("metric")}
            if verdict.get("chosen") == role:
                entry["expected"] = verdict.get("expected")
                entry["time_to_target"] = verdict.get("time_to_target")
            found[index] = entry
    return found


def sample_offers(owner: Any, sample_rows: list[DataSample]) -> list[SampleOffers]:
    """Per sample, the owner's newest recommendations it can be probed with and, for the others, why not:
    from what was kept about each sample (no file is read), by the same check that refuses a probe."""
    recommendations = list(Recommendation.objects.filter(owner=owner)[:OFFERED_RECOMMENDATIONS])
    answer = []
    for sample in sample_rows:
        offers = SampleOffers(sample)
        facts = facts_of(sample)
        for rec in recommendations:
            errors = probe_fit(facts=facts, recommendation=rec)
            offer = Offer(rec, [text for texts in errors.values() for text in texts])
            (offers.misfits if offer.why_not else offers.fits).append(offer)
        answer.append(offers)
    return answer
