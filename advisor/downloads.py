"""What a code download (advisor/export) renders a candidate's files from, read by the selectors.

A recommendation's candidate: the recommendation as served (measured batch and threads where a calibration
set them) and the allocator set-up its latest CPU calibration found faster. A probe's: the same for the
candidate it trained (changed as its next step's variation says: wider, or with weight decay), with the
split, seed and score its stored `results` record.
"""

from __future__ import annotations

from advisor import export, queries
from advisor.engine.variation import describe
from advisor.models import Recommendation
from advisor.probe.models import ProbeJob

ROLES = ("shallow", "deep")


def measured_allocator(rec: Recommendation, index: int) -> export.Allocator | None:
    """The allocator finding of the candidate's newest finished CPU calibration that re-measured it."""
    found = queries.allocator_finding(rec, index)
    if found is None:
        return None
    calibration, finding = found
    env = finding.get("env") or {} if finding.get("recommended") == "tuned" else {}
    return export.Allocator(env=dict(env), text=str(finding.get("text") or ""), calibration=calibration)


def candidate_download(rec: Recommendation, index: int) -> export.Download | None:
    """None when the recommendation has no candidate `index`."""
    payload = queries.recommendation_payload(rec)
    if not 0 <= index < len(payload["candidates"]):
        return None
    return export.Download(payload, index, allocator=measured_allocator(rec, index))


def probe_role(job: ProbeJob, role: str | None = None) -> str | None:
    """The role asked for, else the network the verdict chose, else the first the probe trains."""
    indices = {"shallow": job.shallow_candidate, "deep": job.deep_candidate}
    if role is not None:
        return role if indices.get(role) is not None else None
    chosen = (job.verdict or {}).get("chosen")
    if chosen in indices and indices[chosen] is not None:
        return str(chosen)
    return next((r for r in ROLES if indices[r] is not None), None)


def probe_download(job: ProbeJob, role: str | None = None) -> export.Download | None:
    """The download of the candidate a probe trained as `role` (default: see probe_role), with the probe's
    split where it recorded one; None when the probe has no such candidate."""
    role = probe_role(job, role)
    if role is None:
        return None
    index = job.shallow_candidate if role == "shallow" else job.deep_candidate
    assert index is not None
    sample = job.sample
    demo = sample.original_name if sample is not None and sample.format == "demo" else None
    split = export.probe_split(
        job.results or {},
        probe=job.pk,
        role=role,
        sample=sample.name if sample is not None else "(deleted)",
        label_column=sample.label_column if sample is not None else "",
        demo=demo,
    )
    download = candidate_download(job.recommendation, index)
    if download is None:
        return None
    payload = download.recommendation
    if job.variation:  # the network and training the probe trained: the candidate with its next step's change
        varied = job.candidate(role)
        assert varied is not None
        candidates = list(payload["candidates"])
        candidates[index] = {**candidates[index], **varied, "estimate": candidates[index]["estimate"]}
        payload = {**payload, "candidates": candidates}
    return export.Download(
        payload,
        index,
        allocator=download.allocator,
        probe=split,
        variation=describe(job.variation),
    )
