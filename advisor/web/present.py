"""Presentation of a recommendation: readable numbers, the layer diagram, the memory breakdown. No writes."""

from __future__ import annotations

import math
from typing import Any, Literal

from advisor import engine
from advisor.contract import Candidate, Estimate, Layer, MemoryBytes, Recommendation, Scaling
from advisor.engine.families import FAMILIES, FFN, GAN, title_of
from advisor.engine.families.family import LOSS_ADVERSARIAL, LOSS_CD1, LOSS_ELBO, LOSS_ELBO_GAUSSIAN
from advisor.engine.families.roles import network_inputs
from advisor.engine.layers import count
from advisor.engine.units import TIMES, duration, interval_text, nbytes, percent, ratio_interval_text, si
from advisor.engine.units import shape as shape_text
from advisor.web.pagedata import (
    CandidateView,
    Diagram,
    DiagramRow,
    EstimateView,
    IntervalView,
    MemoryRow,
    NetworkRow,
    RecommendationView,
    ScalingView,
)


def family_title(family: str, depth: str | None = None) -> str:
    """'Deep belief network', from the family registry's title; a feed-forward network says which of the two
    it is ('Shallow feed-forward network'), since the engine offers both."""
    title = title_of(family) if family in FAMILIES else family.upper()
    if family == FFN.key and depth in ("shallow", "deep"):
        title = f"{depth} {title}"
    return title[:1].upper() + title[1:]


def family_label(family: str, depth: str | None = None) -> str:
    """The title with the short name the verdict and the charts use: 'Shallow feed-forward network (FFN)'."""
    return f"{family_title(family, depth)} ({family.upper()})" if family in FAMILIES else family_title(family)


# The engine's loss names, as a reader who does not know them needs them.
LOSSES = {
    "cross_entropy": "cross-entropy loss",
    "mse": "mean squared error loss",
    LOSS_CD1: "contrastive divergence (CD-1: one Gibbs step, Hinton 2010)",
    LOSS_ELBO: "evidence lower bound (reconstruction + KL) loss",
    LOSS_ELBO_GAUSSIAN: "evidence lower bound (Gaussian likelihood + KL) loss",
    LOSS_ADVERSARIAL: "adversarial (generator vs discriminator) loss",
}
# Layers without weights that only transform values: drawn as a note on the layer before them.
ELEMENTWISE = {
    "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
    "Dropout", "Dropout1d", "Dropout2d", "Identity",
}  # fmt: skip
STYLE = {
    "Linear": "dense", "RBM": "dense", "Embedding": "dense", "EmbeddingBag": "dense", "Bilinear": "dense",
    "Conv1d": "conv", "CausalConv1d": "conv", "Conv2d": "conv", "ConvTranspose2d": "conv", "Residual": "conv",
    "Concat": "conv",
    "MaxPool2d": "pool", "AvgPool2d": "pool", "AdaptiveAvgPool2d": "pool", "AdaptiveMaxPool2d": "pool",
    "LSTM": "recurrent", "RNN": "recurrent", "GRU": "recurrent", "LastStep": "recurrent",
    "PoolOverTime": "pool",
}  # fmt: skip
MAX_ROWS = 80
ROW_H = 26
WIDTH = 760
BAR_CENTRE = 540  # labels take the left 420 px, shapes the right 100
BAR_MAX = 220


def interval_view(estimate: Estimate) -> IntervalView:
    """An estimate's 90% interval as the pages write it: the factors ("x0.6 to x1.9", with
    multiplication signs) and each time's range ("25-48 min", with an en dash); empty where the estimate
    has none (stored before intervals)."""
    found, per_batch = estimate.get("interval"), estimate.get("seconds_per_batch")
    if not found or not per_batch:
        return {}
    low, high = found["seconds_per_batch"]
    return {
        "band": f"90%: {ratio_interval_text(low / per_batch, high / per_batch)}",
        "per_batch_range": interval_text(*found["seconds_per_batch"]),
        "per_epoch_range": interval_text(*found["seconds_per_epoch"]),
        "to_train_range": interval_text(*found["seconds_to_train"]),
    }


def _detail(layer: Layer) -> str:
    kind, a = layer["kind"], layer.get("args", {})
    size = a.get("kernel_size")
    ksize = f"{size}{TIMES}{size}" if isinstance(size, int) else shape_text(size) if size else ""
    if kind == "Linear":
        return f"{a.get('in_features')}→{a.get('out_features')}"
    if kind in ("Conv1d", "Conv2d", "ConvTranspose2d"):
        stride = a.get("stride", 1)
        step = "" if stride in (1, [1, 1], (1, 1)) else f"/{stride if isinstance(stride, int) else stride[0]}"
        return f"{ksize}{step}, {a.get('in_channels')}→{a.get('out_channels')} ch"
    if kind == "CausalConv1d":
        dilation = a.get("dilation", 1)
        return (
            f"{size}, causal"
            + (f", dilation {dilation}" if dilation != 1 else "")
            + (f", {a.get('in_channels')}→{a.get('out_channels')} ch")
        )
    if kind == "Gaussian":
        return f"{a.get('features')} learned variances"
    if kind in ("LSTM", "RNN", "GRU"):
        layers = a.get("num_layers", 1)
        return f"{a.get('input_size')} → {a.get('hidden_size')}" + (
            f" {TIMES} {layers} layers" if layers != 1 else ""
        )
    if kind == "Embedding":
        return f"{a.get('num_embeddings')} tokens → {a.get('embedding_dim')}"
    if kind == "EmbeddingBag":
        mode = a.get("mode", "mean")
        return f"{a.get('num_embeddings')} tokens → {a.get('embedding_dim')}, {mode} over steps"
    if kind == "RBM":
        return f"{a.get('visible')} visible ↔ {a.get('hidden')} hidden"
    if "Pool" in kind and ksize:
        return ksize
    if kind == "Residual":
        weighted = sum(
            1 for part in a.get("body", []) if STYLE.get(part.get("kind", "")) in ("conv", "dense")
        )
        return f"{weighted}-layer block" + (", projected shortcut" if a.get("shortcut") else "")
    if kind == "Concat":
        return f"{len(a.get('branches', []))} branches"
    if kind == "Reshape":
        return shape_text(a.get("shape"))
    return ""


def network_rows(layers: list[Layer], input_shape: Any) -> list[NetworkRow]:
    """One row per layer with weights or a shape change, with its output shape, parameters and FLOPs."""
    shape: tuple[int, ...] | None = tuple(input_shape) if input_shape else None
    rows: list[NetworkRow] = [
        {
            "kind": "input",
            "detail": "",
            "shape": shape,
            "parameters": 0,
            "flops": 0,
            "then": [],
            "style": "io",
        }
    ]
    for layer in layers:
        try:
            counts = count([layer], shape) if shape is not None else None
        except (ValueError, KeyError, TypeError, IndexError):
            counts = None
        shape = counts.shape if counts else None
        if layer["kind"] in ELEMENTWISE:
            rows[-1]["then"].append(layer["kind"])
            continue
        rows.append(
            {
                "kind": layer["kind"],
                "detail": _detail(layer),
                "shape": shape,
                "parameters": counts.parameters if counts else None,
                "flops": counts.flops if counts else None,
                "then": [],
                "style": STYLE.get(layer["kind"], "other"),
            }
        )
    return rows


def diagram(name: str, layers: list[Layer], input_shape: Any) -> Diagram:
    """SVG geometry of one network: a bar per row, its width growing with log(output size)."""
    counted = network_rows(layers, input_shape)
    hidden = max(0, len(counted) - MAX_ROWS)
    counted = counted[:MAX_ROWS]
    sizes = [math.prod(r["shape"]) if r["shape"] else 1 for r in counted]
    top = max(math.log10(max(sizes) + 1), 1.0)
    rows: list[DiagramRow] = []
    for i, (row, size) in enumerate(zip(counted, sizes, strict=True)):
        width = 24 + (BAR_MAX - 24) * math.log10(size + 1) / top
        rows.append(
            {
                **row,
                "y": i * ROW_H + 4,
                "text_y": i * ROW_H + 19,
                "x": BAR_CENTRE - width / 2,
                "width": round(width, 1),
                "shape_text": shape_text(row["shape"]),
                "label": (row["kind"] + (f" {row['detail']}" if row["detail"] else "")),
                "note": " + ".join(row["then"]),
                "params_text": si(row["parameters"]) if row["parameters"] else "",
            }
        )
    summary = ", ".join(f"{r['label']} to {r['shape_text']}" for r in rows[1:])
    return {
        "name": name,
        "rows": rows,
        "hidden": hidden,
        "layers_text": f"{len(rows) - 1} layer" + ("" if len(rows) == 2 else "s"),
        "width": WIDTH,
        "height": len(rows) * ROW_H + 8,
        "description": f"{name}: input {shape_text(input_shape)}; {summary}",
    }


def diagrams(candidate: Candidate) -> list[Diagram]:
    try:
        inputs = network_inputs(candidate)
    except (KeyError, TypeError, IndexError):
        inputs = {}
    return [diagram(name, layers, inputs.get(name)) for name, layers in candidate.get("networks", {}).items()]


# the parts of the memory peak (contract.MemoryBytes), as the breakdown names them
MEMORY_PARTS: tuple[
    tuple[Literal["weights", "gradients", "optimizer", "activations", "batch", "workspace"], str], ...
] = (
    ("weights", "Weights"),
    ("gradients", "Gradients"),
    ("optimizer", "Optimiser state"),
    ("activations", "Saved activations (at the peak)"),
    ("batch", "The mini-batch"),
    ("workspace", "Workspace (gradients in flight, optimiser temporaries)"),
)


def memory_rows(memory: MemoryBytes) -> list[MemoryRow]:
    total = memory.get("total") or 1
    rows: list[MemoryRow] = []
    x = 0.0
    for key, label in MEMORY_PARTS:
        value = memory.get(key, 0)
        share = value / total
        rows.append(
            {"key": key, "label": label, "bytes": nbytes(value), "share": share, "x": x, "w": share * 100}
        )
        x += share * 100
    return rows


def memory_notes(candidate: Candidate) -> dict[str, str]:
    """What the memory breakdown's figures cover, where a reader would otherwise wonder: gradients below the
    weights' size (the peak falls inside the backward pass), and the CPU process's growth beside the live
    tensors' peak (`resident_bytes`)."""
    memory = candidate.get("memory_bytes") or {}
    notes: dict[str, str] = {}
    weights, gradients = memory.get("weights", 0), memory.get("gradients", 0)
    if weights > 0 and gradients < weights:
        notes["gradients"] = (
            f"Gradients are {nbytes(gradients)} of the {nbytes(weights)} they reach (one per weight): the "
            "parts are what is alive at the step's peak, which falls inside the backward pass, as it frees "
            "the saved activations layer by layer and makes the gradients. A smaller batch (fewer "
            "activations) moves the peak later, when more gradients exist."
        )
    if candidate.get("resident_bytes"):
        notes["resident"] = nbytes(candidate["resident_bytes"])
    return notes


# what a pre-measurement figure is called where a page sets it beside a measurement: by its basis, since a
# profiled or predicted figure is not the catalog's
ESTIMATE_NAMES = {
    "catalog": "catalog estimate",
    "profiled": "profiled estimate",
    "predicted": "predicted estimate",
}


def estimate_name(estimate: Estimate | None) -> str:
    """The figure named by its basis: "profiled estimate" and the like."""
    return ESTIMATE_NAMES.get(estimate.get("basis", "catalog") if estimate else "catalog", "estimate")


def estimate_view(estimate: Estimate, analytic: Estimate | None = None) -> EstimateView:
    """Times with their basis; when measured, how far the estimate before it (`analytic`, whatever its
    basis: catalog, profiled or predicted) was, named by that basis."""
    view: EstimateView = {
        "basis": estimate.get("basis", "catalog"),
        "name": estimate_name(estimate),
        "per_batch": duration(estimate.get("seconds_per_batch")),
        "per_epoch": duration(estimate.get("seconds_per_epoch")),
        "to_train": duration(estimate.get("seconds_to_train")),
        "batch_size": estimate.get("batch_size"),
        "calibration": estimate.get("calibration"),
        "measured_at": estimate.get("measured_at"),
        "error": estimate.get("expected_error"),
        **interval_view(estimate),
        "correction": estimate.get("correction"),  # whether the learned correction timed it, and why
        "device": estimate.get("device"),
        "devices": estimate.get("devices") or 1,
        "scaling": _scaling_view(estimate.get("scaling")),
        "analytic_to_train": None,
        "prior": None,  # the estimate before the measurement: its basis, device, band and name
        "ratio": None,
    }
    if view["basis"] == "measured" and analytic and analytic.get("seconds_to_train"):
        view["analytic_to_train"] = duration(analytic["seconds_to_train"])
        view["prior"] = {
            "basis": analytic.get("basis", "catalog"),
            "device": analytic.get("device"),
            "error": analytic.get("expected_error"),
            "band": interval_view(analytic).get("band", ""),
            "name": estimate_name(analytic),
        }
        measured = estimate.get("seconds_to_train") or 0
        view["ratio"] = measured / analytic["seconds_to_train"]
    return view


def _scaling_view(scaling: Scaling | None) -> ScalingView | None:
    """How a multi-device time was divided: the measured efficiency and its calibration, or the constant."""
    if not scaling:
        return None
    return {
        **scaling,
        "measured": scaling.get("basis") == "measured",
        "efficiency_percent": percent(scaling["efficiency"]),
        "cut_percent": percent(scaling.get("cut_per_doubling") or 0),
        "world_sizes": ", ".join(str(w) for w in scaling.get("world_sizes", [])),
    }


def candidate_view(index: int, candidate: Candidate, analytic: Estimate | None) -> CandidateView:
    return {
        "index": index,
        "c": candidate,
        "title": family_title(candidate["family"], candidate.get("depth")),
        # a GAN has no hold-out error to stop on (rule train.epochs): its epochs are all run
        "early_stopping": candidate["family"] != GAN.key,
        "loss": LOSSES.get(
            candidate.get("training", {}).get("loss", ""), candidate.get("training", {}).get("loss")
        ),
        "parameters": si(candidate.get("parameters")),
        "flops": si(candidate.get("flops_per_example"), "FLOP"),
        "memory_total": nbytes(candidate.get("memory_bytes", {}).get("total")),
        "estimate": estimate_view(candidate["estimate"], analytic),
    }


def analytic_for(result: Recommendation, index: int, shown: Estimate | None) -> Estimate | None:
    """The estimate before any measurement (catalog, profiled or predicted) to set beside a shown one: at the
    measured batch size when it was measured."""
    originals = result.get("candidates", [])
    original = originals[index].get("estimate") if index < len(originals) else None
    at = shown.get("measured_at") if shown else None
    batch = at.get("batch_size") if at else None
    if shown is None or shown.get("basis") != "measured" or not batch:
        return original
    try:
        return engine.estimate_for(result, index, batch_size=int(batch))
    except (ValueError, IndexError, KeyError):  # a recommendation stored by an older engine
        return original


def recommendation_view(payload: Recommendation, result: Recommendation) -> RecommendationView:
    """The payload (measured estimates merged) beside the stored pre-measurement answer."""
    candidates = [
        candidate_view(i, c, analytic_for(result, i, c.get("estimate", {})))
        for i, c in enumerate(payload.get("candidates", []))
    ]
    flow = payload.get("dataflow", {})
    plan = payload.get("hardware_plan", {})
    # a plan without a GPU moves nothing to one: its rows would only say "no" and "0 s"
    gpu_rows = (
        {"Fits in GPU memory", "Host → GPU transfer per epoch"} if plan.get("device") != "gpu" else set()
    )
    return {
        "candidates": candidates,
        "plan": plan,
        "flow": flow,
        # (label, value, is a time): times carry the estimated mark, like every time on the pages.
        "flow_rows": [
            row
            for row in (
                ("Dataset size", nbytes(flow.get("dataset_bytes")), False),
                ("Fits in RAM", _yes(flow.get("fits_in_ram")), False),
                ("Fits in GPU memory", _yes(flow.get("fits_in_gpu")), False),
                ("Host → GPU transfer per epoch", duration(flow.get("transfer_seconds_per_epoch")), True),
                ("Storage reads per epoch", duration(flow.get("storage_seconds_per_epoch")), True),
                ("Effective compute fraction", percent(flow.get("effective_compute_fraction"), 1), False),
            )
            if row[0] not in gpu_rows
        ],
        "reasons": payload.get("reasons", []),
    }


def _yes(value: Any) -> str:
    return "—" if value is None else ("yes" if value else "no")
