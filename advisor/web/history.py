"""History (newest first, paginated) and compare side by side."""

from __future__ import annotations

from typing import Any, TypedDict

from django.core.paginator import Page
from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from advisor import queries
from advisor.engine.units import nbytes, rate, threads_text
from advisor.ids import id_or
from advisor.models import CalibrationJob, Recommendation
from advisor.web.auth import HtmxHttpRequest, login_required
from advisor.web.jobs import MeasurementRow, job_view
from advisor.web.partial import page_or_fragment
from advisor.web.present import candidate_view, family_title


class Column(TypedDict):
    """One side of a comparison: what it is, its page, and its values by label. A value is shown as it is (a
    text or a number), or is a time with its basis (text, basis)."""

    title: str
    url: str
    values: dict[str, object]


class Cell(TypedDict):
    text: object
    basis: str  # a time's basis ("measured", "catalog", ...); "" for other values


class CompareRow(TypedDict):
    label: str
    cells: list[Cell]
    differs: bool


def history_tab(request: HtmxHttpRequest, tab: str, page: Page[Any]) -> HttpResponse:
    """One tab of the history page (advisor/history.html): a page of rows, newest first."""
    return page_or_fragment(request, "advisor/history.html", "list", {"page": page, "tab": tab})


# The history page's tabs, each read by its selector (the probes' tab: advisor/probe/views.py).
TABS = {"recommendations": queries.recommendation_history, "calibrations": queries.calibration_history}


@require_GET
@login_required
def history(request: HtmxHttpRequest, tab: str = "recommendations") -> HttpResponse:
    return history_tab(request, tab, TABS[tab](request.user, request.GET.get("page")))


@require_GET
@login_required
def compare(request: HtmxHttpRequest) -> HttpResponse:
    kind = "devices" if request.GET.get("kind") == "devices" else "candidates"
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    columns: list[Column] = []
    missing = False
    if a and b:
        columns = [c for c in (_column(request.user, kind, ref) for ref in (a, b)) if c is not None]
        missing = len(columns) < 2
    context = {
        "kind": kind,
        "a": a,
        "b": b,
        "choices": queries.compare_choices(request.user, kind, family=family_title),
        "columns": columns,
        "rows": _rows(columns),
        "missing": missing,
    }
    return page_or_fragment(request, "advisor/compare.html", "table", context)


def _column(user: Any, kind: str, ref: str) -> Column | None:
    if kind == "candidates":
        found = queries.candidate_ref(user, ref)
        if found is None:
            return None
        rec, index = found
        return _candidate_column(rec, index)
    pk = id_or(ref, None)
    job = None if pk is None else queries.calibration_for(user, pk)
    return _device_column(job) if job is not None else None


def _candidate_column(rec: Recommendation, index: int) -> Column:
    payload = queries.recommendation_payload(rec)
    cand = payload["candidates"][index]
    view = candidate_view(index, cand, rec.result["candidates"][index].get("estimate"))
    est = view["estimate"]
    return {
        "title": f"#{rec.pk} candidate {index + 1}: {view['title']}",
        "url": reverse("recommendation", args=[rec.pk]) + f"?c={index}",
        "values": {
            "Task": rec.spec.get("task"),
            "Family": family_title(cand["family"], cand["depth"]),
            "Published network": cand.get("published") or "—",
            "Hidden sizes": ", ".join(map(str, cand.get("hidden_sizes", []))),
            "Parameters": view["parameters"],
            "FLOPs per example": view["flops"],
            "Training memory": view["memory_total"],
            "Batch size": cand["training"]["batch_size"],
            "Epochs": f"up to {cand['training']['epochs']}",
            "Time per batch": (est["per_batch"], est["basis"]),
            "Time to train": (est["to_train"], est["basis"]),
        },
    }


def _device_column(job: CalibrationJob) -> Column:
    v = job_view(job, plots=False)
    # an unreliable configuration (contention, an imprecise median) is never shown as the fastest
    ok = [r for r in v["rows"] if r["status"] == "ok" and r["seconds_per_batch"] and not r["unreliable"]]
    best = min(ok, key=lambda r: r["seconds_per_batch"] / r["batch_size"]) if ok else None
    device = job.device
    measured = v["measured"]
    return {
        "title": f"Calibration #{job.pk} on {device.name}",
        "url": reverse("calibration", args=[job.pk]),
        "values": {
            "Device": f"{device.name} ({device.id})",
            "Kind": device.get_kind_display(),
            "Cores / threads": f"{device.cores or '—'} / {device.threads or '—'}",
            "Memory": nbytes(device.memory_bytes),
            "Network": f"#{job.recommendation_id} candidate {job.candidate + 1}: {v['family_title']}",
            "Status": job.status,
            "Fastest set-up": _setup(best) if best else "—",
            "Time per batch": (best["per_batch"], "measured") if best else "—",
            "Examples per second": rate(best["examples_per_second"], "examples") if best else "—",
            "Time to train": (measured["to_train"], "measured") if measured else "—",
        },
    }


def _setup(row: MeasurementRow) -> str:
    threads = f", {threads_text(row['threads'])}" if row["threads"] else ""
    return f"batch {row['batch_size']}{threads}, {row['allocator']} allocator"


def _rows(columns: list[Column]) -> list[CompareRow]:
    if len(columns) < 2:
        return []
    rows: list[CompareRow] = []
    for label in columns[0]["values"]:
        cells: list[Cell] = []
        for col in columns:
            value = col["values"].get(label, "—")
            text, basis = value if isinstance(value, tuple) else (value, "")
            cells.append({"text": text, "basis": basis})
        rows.append({"label": label, "cells": cells, "differs": cells[0]["text"] != cells[1]["text"]})
    return rows
