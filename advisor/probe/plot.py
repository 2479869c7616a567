"""Coordinates for the inline SVG charts of the probe page (the template draws them; no JavaScript)."""

from __future__ import annotations

import math
from typing import Any

WIDTH, HEIGHT = 560, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 12, 36


def chart(
    series: list[dict[str, Any]],
    *,
    log_x: bool = False,
    target: float | None = None,
    band: tuple[float, float, float] | None = None,  # (x, low, high): an interval drawn as a bar
    x_label: str = "",
    y_label: str = "",
) -> dict[str, Any] | None:
    """series: [{"name", "kind": "line" | "dots", "points": [(x, y), ...]}]; None when nothing to draw."""
    xs: list[float] = [p[0] for s in series for p in s["points"]] + ([band[0]] if band else [])
    ys: list[float] = [p[1] for s in series for p in s["points"]] + ([band[1], band[2]] if band else [])
    if target is not None:
        ys.append(target)
    if not xs or not ys:
        return None

    def fx(v: float) -> float:
        return math.log10(max(v, 1e-9)) if log_x else float(v)

    x0, x1 = fx(min(xs)), fx(max(xs))
    y0, y1 = min(ys), max(ys)
    if x1 - x0 < 1e-9:
        x0, x1 = x0 - 1, x1 + 1
    pad = max((y1 - y0) * 0.08, 0.01)
    y0, y1 = y0 - pad, y1 + pad
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(v: float) -> float:
        return round(LEFT + (fx(v) - x0) / (x1 - x0) * plot_w, 1)

    def py(v: float) -> float:
        return round(TOP + (1 - (v - y0) / (y1 - y0)) * plot_h, 1)

    drawn = []
    for i, s in enumerate(series):
        pts = [{"x": px(x), "y": py(y), "label": f"{x:,.0f}: {y:.3f}"} for x, y in s["points"]]
        drawn.append(
            {
                "name": s["name"],
                "kind": s.get("kind", "line"),
                "css": f"series-{i}",
                "points": pts,
                "path": " ".join(f"{p['x']},{p['y']}" for p in pts),
            }
        )
    y_ticks = [{"y": py(v), "label": f"{v:.2f}"} for v in _ticks(y0, y1)]
    x_ticks = [{"x": px(v), "label": _short(v)} for v in _x_ticks(min(xs), max(xs), log_x)]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "series": drawn,
        "y_ticks": y_ticks,
        "x_ticks": x_ticks,
        "target": None if target is None else {"y": py(target), "label": f"target {target:.2f}"},
        "band": None if band is None else {"x": px(band[0]), "low": py(band[1]), "high": py(band[2])},
        "x_label": x_label,
        "y_label": y_label,
    }


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    step = (hi - lo) / (count - 1)
    return [lo + i * step for i in range(count)]


def _nice(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) from lo to hi."""
    raw = max((hi - lo) / max(count - 1, 1), 1e-9)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _x_ticks(lo: float, hi: float, log_x: bool) -> list[float]:
    if not log_x:
        return _nice(lo, hi)
    ticks = [
        10.0**e for e in range(math.floor(math.log10(max(lo, 1))), math.ceil(math.log10(max(hi, 1))) + 1)
    ]
    inside = [t for t in ticks if lo <= t <= hi]
    return sorted({lo, *inside, hi})


def _short(v: float) -> str:
    if v >= 1_000_000:
        return f"{v / 1e6:.3g}M"
    if v >= 1000:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"


def probe_charts(results: dict[str, Any], target: float | None) -> dict[str, Any]:
    """The learning curve (score against training examples, log scale, with the estimate at full size) and
    the per-epoch validation scores of the networks trained."""
    charts: dict[str, Any] = {}
    fitted = results.get("curve") or {}
    points = fitted.get("points") or []
    if points:
        series = [
            {"name": "measured", "kind": "dots", "points": [(p["examples"], p["score"]) for p in points]}
        ]
        if fitted.get("line"):
            series.append(
                {
                    "name": "fitted",
                    "kind": "line",
                    "points": [(p["examples"], p["score"]) for p in fitted["line"]],
                }
            )
        band = None
        if fitted.get("estimate") is not None and fitted.get("method") in ("power_law", "bounds"):
            band = (fitted["examples"], fitted["low"], fitted["high"])
        charts["curve"] = chart(
            series,
            log_x=True,
            target=target,
            band=band,
            x_label="training examples",
            y_label="held-out score",
        )
    runs = []
    for role in ("shallow", "deep"):
        run = results.get(role) or {}
        rows = run.get("epochs") or []
        if rows:
            runs.append(
                {
                    "name": f"{role} {str(run.get('family', '')).upper()}",
                    "kind": "line",
                    "points": [(r["epoch"], r["val"]) for r in rows],
                }
            )
    if runs:
        charts["epochs"] = chart(runs, target=target, x_label="epoch", y_label="validation score")
    return charts
