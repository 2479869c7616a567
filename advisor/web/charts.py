"""Every chart of the pages (calibration, probe, compare): geometry for templates/advisor/_chart.html, which
draws it as inline SVG without JavaScript. One set of keys, one axis rule and one legend for every plot:

- ticks are evenly spaced round values (1, 2, 2.5 or 5 times a power of ten apart), labelled with one
  number of decimals, and never run past the axis' limit (a score stops at 1);
- each series has a colour class (s0..s3); the legend draws the same mark (line or dot) in the same class,
  so its key matches what is plotted;
- the SVG's accessible name lists every plotted value, so the chart reads without seeing it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict

from advisor.engine.units import duration, si, threads_text

W, H = 460, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 44
CLASSES = ("s0", "s1", "s2", "s3")
MAX_MARKED = 30
Format = Callable[[float], str]


class Series(TypedDict):
    name: str
    points: Sequence[tuple[float, float]]
    kind: NotRequired[Literal["line", "dots", "curve"]]  # line: joined, a dot per point; dots: points only;
    # curve: a fitted or drawn function, joined without dots


class Dot(TypedDict):
    cx: float
    cy: float
    label: str  # what the accessible name says of it


class Plotted(TypedDict):
    """A series as drawn: its SVG points and its dots."""

    name: str
    cls: str  # s0..s3
    kind: Literal["line", "dots", "curve"]
    points: str  # "x,y x,y ..." in SVG coordinates
    dots: list[Dot]
    marked: bool  # a dot per point (few points), else the line alone


class XTick(TypedDict):
    x: float
    label: str


class YTick(TypedDict):
    y: float
    label: str


class Band(TypedDict):
    """An interval drawn as a bar at x."""

    x: float
    low: float
    high: float
    label: str


class Bar(TypedDict):
    x: float
    y: float
    w: float
    h: float
    cx: float
    label: str
    lines: list[str]  # the label, a word a line
    value: str


class LegendEntry(TypedDict):
    cls: str
    kind: str  # a series' kind, "target" or "band"
    name: str
    marked: bool


class Chart(TypedDict):
    """One chart for templates/advisor/_chart.html: its frame, then what it plots."""

    title: str
    xlabel: str
    ylabel: str
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    xlabel_y: int
    ylabel_x: int
    ylabel_y: float
    target: YTick | None  # a line across at the target
    band: Band | None
    series: list[Plotted]
    bars: list[Bar]
    xticks: list[XTick]
    # set once plotted
    yticks: NotRequired[list[YTick]]
    kind: NotRequired[Literal["line", "bar"]]
    description: NotRequired[str]  # the SVG's accessible name: every plotted value
    legend: NotRequired[list[LegendEntry]]  # empty for a single series


class MeasuredRow(TypedDict):
    """What calibration_charts reads of a measured configuration (web.jobs.MeasurementRow has it)."""

    status: str
    batch_size: int
    threads: int  # 0 on a GPU
    allocator: str
    seconds_per_batch: float | None
    examples_per_second: float | None


class ProbeCharts(TypedDict, total=False):
    curve: Chart | None  # the learning curve, where the probe fitted one
    epochs: Chart | None  # validation scores per epoch, where a network trained


def number(value: float) -> str:
    return f"{value:g}"


def _step(span: float, count: int) -> float:
    raw = max(span / max(count, 1), 1e-12)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))


def _decimals(step: float) -> int:
    places = 0
    while places < 9 and abs(round(step * 10**places) - step * 10**places) > 1e-6:
        places += 1
    return places


def axis(
    lo: float, hi: float, *, count: int = 4, floor: float | None = None, ceiling: float | None = None
) -> list[float]:
    """Round, evenly spaced ticks covering lo..hi, clipped to [floor, ceiling]."""
    if hi - lo < 1e-12:
        lo, hi = lo - (abs(lo) * 0.1 or 1), hi + (abs(hi) * 0.1 or 1)
    step = _step(hi - lo, count)
    first, last = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    if floor is not None:
        first = max(first, floor)
    if ceiling is not None:
        last = min(last, ceiling)
    n = round((last - first) / step)
    return [round(first + i * step, 12) for i in range(n + 1)]


def _tick_format(ticks: list[float], fmt: Format | None) -> Format:
    if fmt is not None:
        return fmt
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    places = _decimals(step)
    return lambda v: f"{v:.{places}f}"


def _frame(title: str, xlabel: str, ylabel: str) -> Chart:
    return {
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
        "ylabel_x": 14,
        "ylabel_y": (TOP + H - BOTTOM) / 2,
        "target": None,
        "band": None,
        "series": [],
        "bars": [],
        "xticks": [],
    }


def line_chart(
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    series: Sequence[Series],
    log_x: bool = False,
    x_format: Format = number,
    y_format: Format | None = None,
    y_from_zero: bool = True,
    y_ceiling: float | None = None,
    target: float | None = None,
    band: tuple[float, float, float] | None = None,  # (x, low, high): an interval drawn as a bar at x
    band_label: str = "interval",
) -> Chart | None:
    """Series against a shared x axis (log2 for batch sizes, log10 for example counts); None when empty."""
    points = [p for s in series for p in s["points"]]
    if not points:
        return None
    xs = sorted({p[0] for p in points} | ({band[0]} if band else set()))
    ys = (
        [p[1] for p in points]
        + ([band[1], band[2]] if band else [])
        + ([target] if target is not None else [])
    )
    base = (
        2 if log_x and all(float(x).is_integer() and x > 0 and math.log2(x).is_integer() for x in xs) else 10
    )

    def fx(x: float) -> float:
        return math.log(max(x, 1e-12), base) if log_x else x

    # Few x values are ticked where they are; many get round ticks, and the axis spans those ticks.
    round_x = not log_x and len(xs) > 8
    xticks = axis(xs[0], xs[-1], count=6) if round_x else xs
    lo, hi = fx(xticks[0]), fx(xticks[-1])
    if hi - lo < 1e-12:
        lo, hi = lo - 1, hi + 1
    yticks = axis(
        0.0 if y_from_zero else min(ys), max(ys), floor=0.0 if y_from_zero else None, ceiling=y_ceiling
    )
    y0, y1 = yticks[0], yticks[-1]
    if y1 - y0 < 1e-12:
        y1 = y0 + 1
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(x: float) -> float:
        return round(LEFT + plot_w * (fx(x) - lo) / (hi - lo), 1)

    def sy(y: float) -> float:
        return round(TOP + plot_h * (1 - (min(max(y, y0), y1) - y0) / (y1 - y0)), 1)

    label = _tick_format(yticks, y_format)
    value_text = y_format or (lambda v: f"{v:.3g}")
    chart = _frame(title, xlabel, ylabel)
    for i, s in enumerate(series):
        ordered = sorted(s["points"])
        chart["series"].append(
            {
                "name": s["name"],
                "cls": CLASSES[i % len(CLASSES)],
                "kind": s.get("kind", "line"),
                "points": " ".join(f"{sx(x)},{sy(y)}" for x, y in ordered),
                "dots": [
                    {"cx": sx(x), "cy": sy(y), "label": f"{s['name']}: {x_format(x)} → {value_text(y)}"}
                    for x, y in ordered
                ],
                # A dot per point while they stand apart; a long line (hundreds of epochs) is the line alone.
                "marked": s.get("kind", "line") == "dots"
                or (s.get("kind", "line") == "line" and len(ordered) <= MAX_MARKED),
            }
        )
    if log_x:
        ticks = (
            xs
            if base == 2
            else sorted({xs[0], *(10.0**e for e in range(math.ceil(lo), math.floor(hi) + 1)), xs[-1]})
        )
    else:
        ticks = xticks
    chart["xticks"] = [{"x": sx(x), "label": x_format(x)} for x in _apart(ticks, fx, (hi - lo) * 0.09)]
    chart["yticks"] = [{"y": sy(v), "label": label(v)} for v in yticks]
    words = [d["label"] for s in chart["series"] for d in s["dots"]]
    if target is not None:
        chart["target"] = {"y": sy(target), "label": f"target {value_text(target)}"}
        words.append(f"target {value_text(target)}")
    if band is not None:
        text = f"{band_label} at {x_format(band[0])}: {value_text(band[1])} to {value_text(band[2])}"
        chart["band"] = {"x": sx(band[0]), "low": sy(band[1]), "high": sy(band[2]), "label": text}
        words.append(text)
    chart["kind"], chart["description"] = "line", f"{title}. " + "; ".join(words)
    chart["legend"] = _legend(chart, band_label)
    return chart


def _apart(ticks: Sequence[float], fx: Callable[[float], float], gap: float) -> list[float]:
    """The ticks whose labels do not overlap: the ends always, an inner tick only with room on both sides."""
    kept = [ticks[0]]
    for i, t in enumerate(ticks[1:], 1):
        last = i == len(ticks) - 1
        if fx(t) - fx(kept[-1]) >= gap and (last or fx(ticks[-1]) - fx(t) >= gap):
            kept.append(t)
        elif last and len(kept) > 1:
            kept[-1] = t  # the end replaces the inner tick it would overlap
        elif last:
            kept.append(t)
    return kept


def _legend(chart: Chart, band_label: str) -> list[LegendEntry]:
    entries: list[LegendEntry] = [
        {"cls": s["cls"], "kind": s["kind"], "name": s["name"], "marked": s["marked"]}
        for s in chart["series"]
    ]
    if chart["target"]:
        entries.append({"cls": "target", "kind": "target", "name": chart["target"]["label"], "marked": False})
    if chart["band"]:
        entries.append({"cls": "interval", "kind": "band", "name": band_label, "marked": False})
    return entries if len(entries) > 1 else []


def bar_chart(
    *, title: str, ylabel: str, bars: Sequence[tuple[str, float]], y_format: Format = si
) -> Chart | None:
    if not bars:
        return None
    yticks = axis(0.0, max(v for _, v in bars), floor=0.0)
    top = yticks[-1] or 1.0
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    slot = plot_w / len(bars)
    width = min(48.0, slot * 0.7)
    chart = _frame(title, "", ylabel)
    for i, (name, value) in enumerate(bars):
        h = plot_h * value / top
        x = LEFT + slot * i + (slot - width) / 2
        chart["bars"].append(
            {
                "x": round(x, 1),
                "y": round(TOP + plot_h - h, 1),
                "w": round(width, 1),
                "h": round(h, 1),
                "cx": round(x + width / 2, 1),
                "label": name,
                "lines": name.split(" "),
                "value": y_format(value),
            }
        )
    chart["yticks"] = [{"y": round(TOP + plot_h * (1 - v / top), 1), "label": y_format(v)} for v in yticks]
    description = "; ".join(f"{b['label']}: {b['value']}" for b in chart["bars"])
    chart["kind"], chart["description"], chart["legend"] = "bar", f"{title}. {description}", []
    return chart


def _seconds(row: MeasuredRow) -> float:
    """Seconds per batch of a row calibration_charts kept (those that have them)."""
    return float(row["seconds_per_batch"] or 0.0)


def calibration_charts(rows: Sequence[MeasuredRow]) -> list[Chart]:
    """Time per batch vs threads (at the fastest batch size), vs batch size (at the fastest thread count), one
    line per allocator, and examples per second of every measured configuration."""
    ok = [r for r in rows if r["status"] == "ok" and r.get("seconds_per_batch")]
    if not ok:
        return []
    fastest = min(ok, key=lambda r: _seconds(r) / r["batch_size"])
    allocators = sorted({r["allocator"] for r in ok})
    threads = threads_text(fastest["threads"]) if fastest["threads"] else "GPU"

    def by_allocator(
        pick: Callable[[MeasuredRow], bool], x_key: Literal["threads", "batch_size"]
    ) -> list[Series]:
        return [
            Series(
                name=f"{a} allocator",
                points=[(r[x_key], _seconds(r)) for r in ok if r["allocator"] == a and pick(r)],
            )
            for a in allocators
        ]

    # Threads are compared at the batch size measured with the most thread counts (a doubling sweep stops
    # timing slow thread counts at larger batches), the fastest one's batch when there is a tie.
    counts = {
        b: len({r["threads"] for r in ok if r["batch_size"] == b}) for b in {r["batch_size"] for r in ok}
    }
    widest = max(counts.values())
    at = min((b for b, n in counts.items() if n == widest), key=lambda b: abs(b - fastest["batch_size"]))
    by_threads = widest > 1 and any(r["threads"] for r in ok)  # a GPU's rows have no thread count
    charts = [
        line_chart(
            title=f"Time per batch vs threads (batch {at})",
            xlabel="threads",
            ylabel="time per batch",
            series=by_allocator(lambda r: r["batch_size"] == at, "threads"),
            y_format=duration,
        )
        if by_threads
        else None,
        line_chart(
            title=f"Time per batch vs batch size ({threads})",
            xlabel="batch size",
            ylabel="time per batch",
            series=by_allocator(lambda r: r["threads"] == fastest["threads"], "batch_size"),
            log_x=True,
            y_format=duration,
        ),
        bar_chart(
            title="Examples per second (* tuned allocator)" if len(allocators) > 1 else "Examples per second",
            ylabel="examples / s",
            bars=[
                (
                    _bar_label(r),
                    float(r.get("examples_per_second") or r["batch_size"] / _seconds(r)),
                )
                for r in ok
            ],
        ),
    ]
    return [c for c in charts if c is not None]


def _bar_label(row: MeasuredRow) -> str:
    """'b64 t2' (batch, threads; drawn on two lines); '*' marks the tuned allocator."""
    threads = f" t{row['threads']}" if row["threads"] else ""
    return f"b{row['batch_size']}{threads}" + ("" if row["allocator"] == "default" else "*")


def probe_charts(results: Mapping[str, Any], target: float | None) -> ProbeCharts:
    """The learning curve of the network it was fitted on (held-out score against training examples, log
    scale, with the expected score at full size) and the per-epoch validation scores of each network.
    `results` is a probe's stored results as JSON (advisor/probe/README.md)."""
    charts: ProbeCharts = {}
    fitted = results.get("curve") or {}
    points = fitted.get("points") or []
    network = str(fitted.get("family") or "").upper()
    named = f" ({network})" if network else ""
    if points:
        series = [
            Series(name=f"measured{named}", kind="dots", points=[(p["examples"], p["score"]) for p in points])
        ]
        if fitted.get("line"):
            series.append(
                Series(
                    name="fitted curve",
                    kind="curve",
                    points=[(p["examples"], p["score"]) for p in fitted["line"]],
                )
            )
        band = None
        if fitted.get("estimate") is not None and fitted.get("method") in ("power_law", "bounds"):
            band = (fitted["examples"], fitted["low"], fitted["high"])
        charts["curve"] = line_chart(
            title=f"Held-out score against training examples{named}",
            xlabel="training examples",
            ylabel="held-out score",
            series=series,
            log_x=True,
            x_format=si,  # 12000 -> "12 k", as every count with a prefix is written
            y_from_zero=False,
            y_ceiling=1.0,
            target=target,
            band=band,
            band_label="expected at full size",
        )
    runs = [
        Series(
            name=f"{role} {str(run.get('family', '')).upper()}",
            points=[(r["epoch"], r["val"]) for r in run["epochs"]],
        )
        for role, run in ((role, results.get(role) or {}) for role in ("shallow", "deep"))
        if run.get("epochs")
    ]
    if runs:
        charts["epochs"] = line_chart(
            title="Validation score per epoch",
            xlabel="epoch",
            ylabel="validation score",
            series=runs,
            y_from_zero=False,
            y_ceiling=1.0,
            target=target,
        )
    return charts


def generation_chart(results: Mapping[str, Any], target: float | None) -> Chart | None:
    """A generation probe's generator: its validation two-sample score at each evaluation, against the
    target (None before the first evaluation). `results` is the probe's stored results as JSON."""
    run = results.get("generator") or {}
    family = str(run.get("family") or "").upper()
    return line_chart(
        title=f"Validation two-sample score while training{f' ({family})' if family else ''}",
        xlabel="epoch",
        ylabel="two-sample score",
        series=[
            Series(
                name=f"{family or 'generator'}",
                points=[(r["epoch"], r["val"]) for r in run.get("curve") or []],
            )
        ],
        y_from_zero=True,
        y_ceiling=1.0,
        target=target,
    )
