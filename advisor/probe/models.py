"""What the probe stores: users' data samples (the file lives under VAR_DIR/samples/<user id>/) and probe
jobs."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models

from advisor.contract import Candidate
from advisor.engine.variation import describe, vary
from advisor.models import Device, DeviceJob, OwnedRecord, Recommendation


class DataSample(OwnedRecord):
    FORMATS = [(f, f) for f in ("csv", "npz", "npy", "zip", "demo")]

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="samples")
    name = models.CharField(max_length=200)
    format = models.CharField(max_length=8, choices=FORMATS)
    original_name = models.CharField(max_length=255, blank=True)
    label_column = models.CharField(max_length=200, blank=True)
    path = models.CharField(max_length=500)  # relative to VAR_DIR/samples
    size_bytes = models.PositiveBigIntegerField(default=0)  # the stored canonical NPZ
    upload_bytes = models.PositiveBigIntegerField(default=0)
    examples = models.PositiveIntegerField()
    input_shape = models.JSONField(default=list)
    label_kind = models.CharField(max_length=8)  # "class", "value" or "none"
    outputs = models.PositiveIntegerField(null=True, blank=True)
    info = models.JSONField(default=dict, blank=True)  # classes, class counts

    def __str__(self) -> str:
        return f"{self.name} ({self.examples} examples)"

    @property
    def file(self) -> Path:
        from advisor.probe.conf import samples_root

        return samples_root() / self.path


class ProbeJob(DeviceJob):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="probes")
    recommendation = models.ForeignKey(Recommendation, on_delete=models.CASCADE, related_name="probes")
    sample = models.ForeignKey(DataSample, on_delete=models.SET_NULL, null=True, related_name="probes")
    device = models.ForeignKey(Device, on_delete=models.PROTECT, related_name="probes")
    shallow_candidate = models.PositiveIntegerField(null=True, blank=True)
    deep_candidate = models.PositiveIntegerField(null=True, blank=True)
    # the probe whose next step this one runs (POST probes/{id}/next/): a chain, read back through `previous`
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="next_probes"
    )
    # the change its candidate carries against the recommendation's, where a next step proposed one
    # ({"width": 2}, {"weight_decay": 0.001}: advisor/engine/variation.py); {}: the candidate as recommended
    variation = models.JSONField(default=dict, blank=True)

    # split, baseline, shallow, deep, curve: each saved as it comes
    results = models.JSONField(default=dict, blank=True)
    verdict = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"]), models.Index(fields=["device", "status"])]

    def __str__(self) -> str:
        return f"Probe {self.pk} on {self.device_id} ({self.status})"

    @property
    def variation_text(self) -> str:
        """Its candidate's change in words ("every hidden width x2"), or "" (pages, history)."""
        return describe(self.variation)

    @property
    def score(self) -> float | None:
        """The score its verdict reports for the network it chose (None: no verdict, nothing chosen)."""
        verdict = self.verdict or {}
        chosen = verdict.get("chosen")
        value = verdict.get(f"{chosen}_score") if chosen else None
        return None if value is None else float(value)

    def candidate(self, role: str) -> Candidate | None:
        """The network the probe trains as `role`: the recommendation's candidate, with its variation."""
        index = self.shallow_candidate if role == "shallow" else self.deep_candidate
        if index is None:
            return None
        candidates: list[Candidate] = self.recommendation.result.get("candidates", [])
        if index >= len(candidates):
            return None
        return vary(candidates[index], self.variation) if self.variation else candidates[index]

    def chain(self, limit: int = 50) -> list[ProbeJob]:
        """This probe's predecessors, oldest first, then this probe (at most `limit`: a chain of next steps
        grows one probe per click)."""
        found: list[ProbeJob] = [self]
        while found[0].previous_id is not None and len(found) < limit:
            before = found[0].previous
            if before is None:
                break
            found.insert(0, before)
        return found
