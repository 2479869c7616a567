"""The data-flow figure: storage -> RAM -> link -> processor, each stage with what crosses it per epoch."""

from __future__ import annotations

from typing import Any

from advisor import engine
from advisor.contract import Dataflow, HardwarePlan, TaskSpec
from advisor.engine.catalog import Transfer
from advisor.engine.units import TIMES, byte_rate, duration, nbytes, threads_text

BOX_W, BOX_H, GAP, TOP = 180, 70, 150, 8


def _transfer(entries: list[Transfer], wanted: str | None) -> tuple[str, float | None]:
    """A store's or a link's name and bandwidth; its id, and no bandwidth, where the catalog lacks it."""
    found = next((e for e in entries if e["id"] == wanted), None)
    return (found["name"], found["gbps"]) if found else (wanted or "—", None)


def flow_figure(spec: TaskSpec, plan: HardwarePlan, flow: Dataflow) -> dict[str, Any]:
    """Boxes and arrows of the data's path in one epoch, with the engine's own figures on each arrow."""
    hw = spec["hardware"]
    storage, storage_gbps = _transfer(engine.storage_catalog(), hw.get("storage"))
    link_gbps = _transfer(engine.link_catalog(), hw.get("link"))[1]
    on_gpu = plan.get("device") == "gpu"
    fits_ram, fits_gpu = flow.get("fits_in_ram"), flow.get("fits_in_gpu")
    boxes = [
        ("Storage", storage, f"data {nbytes(flow.get('dataset_bytes'))}"),
        (
            "RAM",
            f"{nbytes(hw.get('ram_gb', 0) * 1e9)} per node",
            "holds the data" if fits_ram else "too small for the data",
        ),
    ]
    arrows = [
        (
            f"{hw.get('storage')} · {byte_rate(storage_gbps * 1e9)}" if storage_gbps else "",
            "read once"
            if fits_ram or fits_gpu
            else f"{duration(flow.get('storage_seconds_per_epoch'))} / epoch",
        )
    ]
    if on_gpu:
        gpu = next(
            (g["name"] for g in engine.gpu_catalog() if g["id"] == hw.get("gpu")), hw.get("gpu") or "—"
        )
        boxes.append(
            (
                "GPU",
                f"{plan.get('gpus', 1)} {TIMES} {gpu.removeprefix('NVIDIA ')}",
                "data resident" if fits_gpu else "fed per batch",
            )
        )
        arrows.append(
            (
                f"{hw.get('link')} · {byte_rate(link_gbps * 1e9)}" if link_gbps else str(hw.get("link")),
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
