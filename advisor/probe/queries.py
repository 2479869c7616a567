"""The probe's selectors: the samples and probes a user may see (models.visible_to), what a recommendation's
latest probes measured, and which of a user's recommendations each kept sample can probe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

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
    jobs = visible_to(user, ProbeJob.objects.prefetch_related("next_probes"))
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
    expected score at full size, and (where it reached the target) the epochs and seconds to the target; a
    probe of a changed candidate (a next step's `variation`) is not the candidate's. For merging into a
    recommendation's estimates (the time to train at the accuracy target)."""
    found: dict[int, ProbeEstimate] = {}
    for job in rec.probes.filter(status=ProbeJob.SUCCEEDED, verdict__isnull=False).order_by("finished_at"):
        if job.variation:  # it measured the candidate changed (wider, weight decay), not the one recommended
            continue
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
    first = expected_first(found)
    if first is not None:
        found[first["index"]]["expected_first"] = True
    return found


def time_to_target(entry: ProbeEstimate) -> tuple[float, str] | None:
    """The seconds of training a probe's curves give its candidate to reach the target at full size, and how
    ("measured": it reached the target on the sample; "predicted": its learning curve forecasts it); None
    where the probe says it does not reach it, or cannot tell, or has no time per epoch to convert with."""
    timed = entry.get("time_to_target") or {}
    if timed.get("reached") and timed.get("seconds_to_target") is not None:
        return float(timed["seconds_to_target"]), "measured"
    forecast = timed.get("forecast") or {}
    if forecast.get("reached") and forecast.get("seconds_to_target") is not None:
        return float(forecast["seconds_to_target"]), "predicted"
    return None


class ExpectedFirst(TypedDict):
    """The probed candidate the probes' curves bring to the target soonest, and how that was told."""

    index: int
    seconds: float
    how: str  # "measured" or "predicted"
    probe: int
    compared: list[int]  # the candidates whose probes expect them to reach the target
    family: NotRequired[str | None]  # expected_first_of: the candidate's
    depth: NotRequired[str | None]


def expected_first(estimates: dict[int, ProbeEstimate]) -> ExpectedFirst | None:
    """Among the probed candidates whose probe expects them to reach the target, the one its curves bring
    there soonest (issue 25 item 1): {"index", "seconds", "how", "probe", "compared"}, None where no probe
    expects any to. The recommendation keeps its order (calibrations, probes and downloads address
    candidates by index): the page marks this one instead of renumbering."""
    timed = {i: t for i, e in estimates.items() if (t := time_to_target(e)) is not None}
    if not timed:
        return None
    index = min(timed, key=lambda i: (timed[i][0], i))
    seconds, how = timed[index]
    return {
        "index": index,
        "seconds": seconds,
        "how": how,
        "probe": estimates[index]["probe"],
        "compared": sorted(timed),
    }


def expected_first_of(rec: Recommendation) -> ExpectedFirst | None:
    """expected_first of the recommendation's latest probe estimates, with the candidate's family."""
    first = expected_first(latest_probe_estimates(rec))
    if first is None:
        return None
    candidates = rec.result.get("candidates", [])
    cand = candidates[first["index"]] if first["index"] < len(candidates) else {}
    first["family"], first["depth"] = cand.get("family"), cand.get("depth")
    return first


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
