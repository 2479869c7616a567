"""The data-flow figure: storage -> RAM -> link -> processor, each stage with what crosses it per epoch."""

from __future__ import annotations

from typing import Any

from advisor import engine
from advisor.engine.units import TIMES, byte_rate, duration, nbytes, threads_text

BOX_W, BOX_H, GAP, TOP = 180, 70, 150, 8


def _catalog(entries: list[dict[str, Any]], wanted: str | None) -> dict[str, Any]:
    return next((e for e in entries if e["id"] == wanted), {"name": wanted or "—", "gbps": None})


def flow_figure(spec: dict[str, Any], plan: dict[str, Any], flow: dict[str, Any]) -> dict[str, Any]:
    """Boxes and arrows of the data's path in one epoch, with the engine's own figures on each arrow."""
    hw = spec["hardware"]
    storage = _catalog(engine.storage_catalog(), hw.get("storage"))
    link = _catalog(engine.link_catalog(), hw.get("link"))
    on_gpu = plan.get("device") == "gpu"
    fits_ram, fits_gpu = flow.get("fits_in_ram"), flow.get("fits_in_gpu")
    boxes = [
        ("Storage", storage["name"], f"data {nbytes(flow.get('dataset_bytes'))}"),
        (
            "RAM",
            f"{nbytes(hw.get('ram_gb', 0) * 1e9)} per node",
            "holds the data" if fits_ram else "too small for the data",
        ),
    ]
    arrows = [
        (
            f"{hw.get('storage')} · {byte_rate(storage['gbps'] * 1e9)}" if storage["gbps"] else "",
            "read once"
            if fits_ram or fits_gpu
            else f"{duration(flow.get('storage_seconds_per_epoch'))} / epoch",
        )
    ]
    if on_gpu:
        gpu = _catalog(engine.gpu_catalog(), hw.get("gpu"))
        boxes.append(
            (
                "GPU",
                f"{plan.get('gpus', 1)} {TIMES} {gpu['name'].removeprefix('NVIDIA ')}",
                "data resident" if fits_gpu else "fed per batch",
            )
        )
        arrows.append(
            (
                f"{hw.get('link')} · {byte_rate(link['gbps'] * 1e9)}"
                if link["gbps"]
                else str(hw.get("link")),
                "once, then resident"
                if fits_gpu
                else f"{duration(flow.get('transfer_seconds_per_epoch'))} / epoch",
            )
        )
    else:
        boxes.append(("CPU", threads_text(plan.get("threads", hw.get("cpu_cores"))), "computes in RAM"))
        arrows.append(("memory bus", "no transfer"))
    drawn_boxes = [
        {
            "x": i * (BOX_W + GAP) + 2,
            "title": t,
            "line1": a,
            "line2": b,
            "cx": i * (BOX_W + GAP) + 2 + BOX_W / 2,
        }
        for i, (t, a, b) in enumerate(boxes)
    ]
    drawn_arrows = [
        {
            "x1": (i + 1) * BOX_W + i * GAP + 4,
            "x2": (i + 1) * (BOX_W + GAP) - 2,
            "cx": (i + 1) * BOX_W + i * GAP + GAP / 2 + 2,
            "above": above,
            "below": below,
        }
        for i, (above, below) in enumerate(arrows)
    ]
    description = (
        "; ".join(f"{b['title']}: {b['line1']}, {b['line2']}" for b in drawn_boxes)
        + ". "
        + "; ".join(f"{a['above']}: {a['below']}" for a in drawn_arrows)
    )
    return {
        "boxes": drawn_boxes,
        "arrows": drawn_arrows,
        "width": len(boxes) * BOX_W + (len(boxes) - 1) * GAP + 4,
        "height": TOP + BOX_H + 8,
        "top": TOP,
        "box_w": BOX_W,
        "box_h": BOX_H,
        "mid": TOP + BOX_H / 2,
        "description": description,
    }
