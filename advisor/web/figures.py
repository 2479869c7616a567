"""Server-rendered plots (inline SVG geometry for templates/advisor/_plot.html): no JavaScript needed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from advisor.web.present import duration, si

W, H = 440, 250
LEFT, RIGHT, TOP, BOTTOM = 70, 16, 14, 44
SERIES_CLASSES = ("s0", "s1", "s2", "s3")


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * 10**exp >= value:
            return float(step * 10**exp)
    return float(10 ** (exp + 1))


def _y_ticks(top: float, fmt: Any) -> list[dict[str, Any]]:
    return [
        {"y": round(TOP + (H - TOP - BOTTOM) * (1 - i / 4), 1), "label": fmt(top * i / 4)} for i in range(5)
    ]


def line_plot(
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    log_x: bool = False,
    y_format: Any = duration,
) -> dict[str, Any] | None:
    """Points joined per series; x on a log2 axis for batch sizes. None when there is nothing to draw."""
    points = [p for _, pts in series for p in pts]
    if not points:
        return None

    def fx(x: float) -> float:
        return math.log2(x) if log_x else x

    xs = sorted({p[0] for p in points})
    lo, hi = fx(xs[0]), fx(xs[-1])
    if hi == lo:
        lo, hi = lo - 1, hi + 1
    top = _nice_max(max(p[1] for p in points) * 1.05)
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(x: float) -> float:
        return round(LEFT + plot_w * (fx(x) - lo) / (hi - lo), 1)

    def sy(y: float) -> float:
        return round(TOP + plot_h * (1 - y / top), 1)

    drawn: list[dict[str, Any]] = []
    for i, (name, pts) in enumerate(series):
        ordered = sorted(pts)
        drawn.append(
            {
                "name": name,
                "cls": SERIES_CLASSES[i % len(SERIES_CLASSES)],
                "points": " ".join(f"{sx(x)},{sy(y)}" for x, y in ordered),
                "dots": [
                    {"cx": sx(x), "cy": sy(y), "label": f"{name}: {x:g} → {y_format(y)}"} for x, y in ordered
                ],
            }
        )
    description = "; ".join(d["label"] for s in drawn for d in s["dots"])
    return {
        "kind": "line",
        "title": title,
        "xlabel": xlabel,
        "ylabel": ylabel,
        "width": W,
        "height": H,
        "left": LEFT,
        "right": W - RIGHT,
        "top": TOP,
        "bottom": H - BOTTOM,
        "xlabel_y": H - 6,
        "series": drawn,
        "xticks": [{"x": sx(x), "label": f"{x:g}"} for x in xs],
        "yticks": _y_ticks(top, y_format),
        "description": f"{title}. {description}",
        "legend": len(drawn) > 1,
    }


def bar_plot(*, title: str, ylabel: str, bars: Sequence[tuple[str, float]]) -> dict[str, Any] | None:
    if not bars:
        return None
    top = _nice_max(max(v for _, v in bars) * 1.05)
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    slot = plot_w / len(bars)
    width = min(48.0, slot * 0.7)
    drawn = []
    for i, (label, value) in enumerate(bars):
        h = plot_h * value / top
        x = LEFT + slot * i + (slot - width) / 2
        drawn.append(
            {
                "x": round(x, 1),
                "y": round(TOP + plot_h - h, 1),
                "w": round(width, 1),
                "h": round(h, 1),
                "cx": round(x + width / 2, 1),
                "label": label,
                "value": si(value),
            }
        )
    return {
        "kind": "bar",
        "title": title,
        "ylabel": ylabel,
        "xlabel": "",
        "width": W,
        "height": H,
        "left": LEFT,
        "right": W - RIGHT,
        "top": TOP,
        "bottom": H - BOTTOM,
        "xlabel_y": H - 6,
        "bars": drawn,
        "yticks": _y_ticks(top, si),
        "description": f"{title}. " + "; ".join(f"{b['label']}: {b['value']}" for b in drawn),
    }


def calibration_plots(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Time per batch vs threads (at the fastest batch size), vs batch size (at the fastest thread count), and
    examples per second of every measured configuration."""
    ok = [r for r in rows if r["status"] == "ok" and r.get("seconds_per_batch")]
    if not ok:
        return []
    fastest = min(ok, key=lambda r: r["seconds_per_batch"] / r["batch_size"])
    allocators = sorted({r["allocator"] for r in ok})
    threads = (
        (f"{fastest['threads']} thread" + ("" if fastest["threads"] == 1 else "s"))
        if fastest["threads"]
        else "GPU"
    )

    def by_allocator(pick: Any, x_key: str) -> list[tuple[str, list[tuple[float, float]]]]:
        return [
            (
                f"allocator {a}",
                [(r[x_key], r["seconds_per_batch"]) for r in ok if r["allocator"] == a and pick(r)],
            )
            for a in allocators
        ]

    by_threads = any(r["threads"] for r in ok)  # CPU sweeps; a GPU's rows have no thread count
    plots = [
        line_plot(
            title=f"Time per batch vs threads (batch {fastest['batch_size']})",
            xlabel="threads",
            ylabel="seconds per batch",
            series=by_allocator(lambda r: r["batch_size"] == fastest["batch_size"], "threads"),
        )
        if by_threads
        else None,
        line_plot(
            title=f"Time per batch vs batch size ({threads})",
            xlabel="batch size",
            ylabel="seconds per batch",
            series=by_allocator(lambda r: r["threads"] == fastest["threads"], "batch_size"),
            log_x=True,
        ),
        bar_plot(
            title="Examples per second",
            ylabel="examples / s",
            bars=[(_bar_label(r), _throughput(r)) for r in ok],
        ),
    ]
    return [p for p in plots if p is not None]


def _throughput(row: dict[str, Any]) -> float:
    return float(row.get("examples_per_second") or row["batch_size"] / row["seconds_per_batch"])


def _bar_label(row: dict[str, Any]) -> str:
    """'b64 t2' (batch, threads); '*' marks the tuned allocator."""
    threads = f" t{row['threads']}" if row["threads"] else ""
    return f"b{row['batch_size']}{threads}" + ("" if row["allocator"] == "default" else "*")
