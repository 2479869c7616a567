"""Read-only queries of the probe that other parts show: what a recommendation's latest probes measured."""

from __future__ import annotations

from advisor.contract import ProbeEstimate
from advisor.models import Recommendation
from advisor.probe.models import ProbeJob


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
