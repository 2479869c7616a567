"""Writes a shi2016 run: the CSV (a row per network, device, threads), the Markdown table, the PNG plots."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import shi2016_paper as paper
from bench.networks import NAMES, PAPER_PARAMETERS

Row = dict[str, Any]

# copied from each advisor.calibration.measure() result into the row
MEASURED = (
    "seconds_per_batch",
    "mean_seconds_per_batch",
    "iqr",
    "iterations",
    "noisy",
    "unreliable",
    "interval_halfwidth",
    "achieved_flops",
    "examples_per_second",
    "peak_memory_bytes",
    "step_flops_per_example",
)

COLUMNS = [
    "network",
    "device",
    "threads",
    "batch_size",
    "seconds_per_batch",
    "iqr",
    "iterations",
    "achieved_flops",
    "paper_caffe",
    "paper_cntk",
    "paper_tensorflow",
    "paper_torch",
    "peak_flops",
    "fraction_of_peak",
    *[f"paper_{tool.lower()}_{card}" for tool in paper.TOOLS for card in paper.GPUS],
    "mean_seconds_per_batch",
    "noisy",
    "unreliable",
    "unreliable_reasons",
    "interval_halfwidth",
    "examples_per_second",
    "peak_memory_bytes",
    "step_flops_per_example",
    "parameters",
    "flops_per_example",
    "allocator",
    "definition",
    "error",
]

CAVEATS = [
    "Hardware differs: the paper's CPU figures are from a 4-core Intel i7-3820 (2012, AVX, OpenBLAS 0.2.18 / "
    "Eigen), ours from the machine in `machine.json`, with PyTorch's own kernels (MKL / oneDNN). Compare "
    "ratios and the shape of the thread scaling, not absolute seconds.",
    "Network definitions: the sizes of the authors' public harness (DLBench), not Table 2's parameter "
    "counts, "
    "which do not match the paper's own layer sizes (FCN-5: 3 x 2048 sigmoid units between 26,752 inputs and "
    "26,752 classes is 118 M parameters, Table 2 says 55 M). The table below gives each network's parameters "
    "and where its definition came from.",
    "One iteration = forward, backward and an SGD update on one synthetic mini-batch, as in the paper; we "
    "report the median over the timed iterations and the interquartile range (the paper reports a mean); "
    "beside it, the half-width of the median's 90% interval, and **unreliable** with its reasons where that "
    "is wider than ±5% (a --quick run's two iterations give none) or other work was seen on the machine.",
    "The paper's cells are its desktop CPU at the same thread count (empty where it reports none); for GPU "
    "rows the paper_<tool>_<card> columns hold its three GPUs.",
]


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e4 else f"{value:.3e}"
    return str(value)


def _spread(row: Row) -> str:
    """How far the median can be trusted: its 90% interval's half-width, and the unreliable mark with its
    reasons (measure()'s stopping rule and contention signals)."""
    half = row.get("interval_halfwidth")
    text = f" (±{half:.0%})" if half is not None else " (no interval)"
    if row.get("unreliable"):
        text += f" **unreliable**: {row.get('unreliable_reasons') or ''}"
    return text


def paper_cells(network: str, device: str, threads: int, table: paper.Table) -> Row:
    """The paper's figures for this row: desktop CPU at the same thread count, or the three GPUs."""
    cells: Row = {}
    for tool in paper.TOOLS:
        on_cpu = paper.desktop(table, network, tool, threads) if device == "cpu" else None
        cells[f"paper_{tool.lower()}"] = on_cpu
        for card in paper.GPUS:
            on_gpu = paper.gpu(table, network, tool, card) if device != "cpu" else None
            cells[f"paper_{tool.lower()}_{card}"] = on_gpu
    return cells


def write_csv(rows: Sequence[Row], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in COLUMNS})


def write_json(data: Any, path: Path) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")


def _speedups(rows: Sequence[Row], network: str, key: str) -> dict[int, float]:
    """Time at 1 thread / time at t threads, for our column (key) or a paper column, CPU rows only."""
    by_threads = {
        r["threads"]: r[key] for r in rows if r["network"] == network and r["device"] == "cpu" and r.get(key)
    }
    base = by_threads.get(1)
    return {t: base / v for t, v in by_threads.items() if base} if base else {}


def markdown(rows: Sequence[Row], info: dict[str, Any], peaks: Sequence[dict[str, Any]], title: str) -> str:
    lines = [f"# {title}", ""]
    lines += [
        f"- Machine: {info['cpu_model']}, {info['physical_cores']} physical cores "
        f"({info['logical_cpus']} logical), torch {info['torch']}"
        + (f", GPUs: {', '.join(g['name'] for g in info['gpus'])}" if info.get("gpus") else ", no GPU"),
        f"- Run: {info['started_utc']} to {info.get('finished_utc', '?')} UTC; load average (1/5/15 min) "
        f"at start {_loads(info['load_average_start'])}, at end {_loads(info.get('load_average_end'))}",
        f"- Allocator: **{info['allocator']}** (environment: "
        f"{', '.join(f'{k}={v}' for k, v in info['malloc_env'].items()) or 'no MALLOC_*: glibc defaults'})",
        f"- Settings: {info.get('settings', {})}",
        "",
    ]
    lines += [f"> {c}" for c in CAVEATS] + [""]

    lines += ["## Seconds per mini-batch, side by side with the paper (desktop CPU, same thread count)", ""]
    lines += [
        "| network | device | threads | batch | ours s/batch | IQR | GFLOP/s | % of matmul peak "
        "| Caffe | CNTK | TensorFlow | Torch | best paper / ours |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        tools = [r.get(f"paper_{t.lower()}") for t in paper.TOOLS]
        best = min((v for v in tools if v), default=None)
        ours = r.get("seconds_per_batch")
        ratio = f"{best / ours:.2f}x" if best and ours else ""
        if r.get("error"):
            lines.append(
                f"| {r['network']} | {r['device']} | {r['threads']} | {r['batch_size']} | failed: "
                f"{str(r['error'])[:60]} | | | | | | | | |"
            )
            continue
        gflops = r["achieved_flops"] / 1e9 if r.get("achieved_flops") else None
        frac = 100 * r["fraction_of_peak"] if r.get("fraction_of_peak") else None
        lines.append(
            f"| {r['network']} | {r['device']} | {r['threads']} | {r['batch_size']} | "
            f"{_fmt(ours)}{_spread(r)} "
            f"| {_fmt(r.get('iqr'), 2)} | {'' if gflops is None else f'{gflops:.1f}'} "
            f"| {'' if frac is None else f'{frac:.0f}%'} | "
            + " | ".join(_fmt(v) for v in tools)
            + f" | {ratio} |"
        )

    lines += ["", "## Thread scaling: speed-up over 1 thread (ours and the paper's desktop)", ""]
    lines += [
        "| network | threads | ours | Caffe | CNTK | TensorFlow | Torch |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for network in NAMES:
        ours = _speedups(rows, network, "seconds_per_batch")
        theirs = [_speedups(rows, network, f"paper_{t.lower()}") for t in paper.TOOLS]
        for t in sorted(k for k in ours if k > 1):
            cells = " | ".join(f"{s[t]:.2f}" if t in s else "" for s in theirs)
            lines.append(f"| {network} | {t} | {ours[t]:.2f} | {cells} |")

    if any(r["device"] != "cpu" for r in rows):
        lines += ["", "## GPUs (paper: GTX 980 / GTX 1080 / K80, seconds per mini-batch)", ""]
        lines += [
            "| network | device | ours | " + " | ".join(paper.TOOLS) + " |",
            "|---|---|--:|--:|--:|--:|--:|",
        ]
        for r in rows:
            if r["device"] == "cpu":
                continue
            cells = [
                "/".join(_fmt(r.get(f"paper_{t.lower()}_{c}")) or "-" for c in paper.GPUS)
                for t in paper.TOOLS
            ]
            lines.append(
                f"| {r['network']} | {r['device']} | {_fmt(r.get('seconds_per_batch'))} | "
                + " | ".join(cells)
                + " |"
            )

    lines += [
        "",
        "## Matmul peak (fp32, the physical limit)",
        "",
        "| device | threads | GFLOP/s (median) | best |",
        "|---|--:|--:|--:|",
    ]
    lines += [
        f"| {p['device']} | {p['threads']} | {p['flops'] / 1e9:.1f} | {p['best_flops'] / 1e9:.1f} |"
        for p in peaks
    ]

    lines += [
        "",
        "## Networks used",
        "",
        "| network | parameters (ours) | paper Table 2 | forward GFLOP/example | definition |",
        "|---|--:|--:|--:|---|",
    ]
    seen: set[str] = set()
    for r in rows:
        if r["network"] in seen or not r.get("parameters"):
            continue
        seen.add(r["network"])
        lines.append(
            f"| {r['network']} | {r['parameters'] / 1e6:.2f} M | {PAPER_PARAMETERS[r['network']]} "
            f"| {r['flops_per_example'] / 1e9:.3f} | {r['definition']} |"
        )
    return "\n".join(lines) + "\n"


def _loads(values: Sequence[float] | None) -> str:
    return "/".join(f"{v:.2f}" for v in values) if values else "?"


def plots(rows: Sequence[Row], out: Path, stem: str) -> list[Path]:
    """Time per batch and speed-up vs threads, one panel per network: ours against the four tools."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    networks = [n for n in NAMES if any(r["network"] == n and r["device"] == "cpu" for r in rows)]
    if not networks:
        return []
    cols = min(3, len(networks))
    nrows = math.ceil(len(networks) / cols)
    written = []
    for kind in ("time", "speedup"):
        fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.6 * nrows), squeeze=False)
        for ax, network in zip(axes.flat, networks, strict=False):
            _panel(ax, rows, network, kind)
        for ax in list(axes.flat)[len(networks) :]:
            ax.set_visible(False)
        fig.suptitle(
            "Shi et al. 2016 on this machine: "
            + ("seconds per mini-batch vs CPU threads" if kind == "time" else "speed-up over 1 thread")
            + " (paper: i7-3820 desktop)",
            fontsize=10,
        )
        fig.tight_layout()
        path = out / f"{stem}_{kind}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def _panel(ax: Any, rows: Sequence[Row], network: str, kind: str) -> None:
    ours = sorted(
        (r for r in rows if r["network"] == network and r["device"] == "cpu"), key=lambda r: r["threads"]
    )
    table = paper.load()
    styles = {"Caffe": "tab:blue", "CNTK": "tab:orange", "TensorFlow": "tab:green", "Torch": "tab:red"}
    for tool, color in styles.items():
        pts = [(t, paper.desktop(table, network, tool, t)) for t in paper.DESKTOP_THREADS]
        pts = [(t, v) for t, v in pts if v]
        if kind == "speedup":
            base = paper.desktop(table, network, tool, 1)
            pts = [(t, base / v) for t, v in pts] if base else []
        if pts:
            ax.plot(*zip(*pts, strict=True), "--o", color=color, ms=3, lw=1, label=f"{tool} (paper)")
    good = [r for r in ours if r.get("seconds_per_batch")]
    if good:
        xs = [r["threads"] for r in good]
        if kind == "time":
            ax.plot(
                xs, [r["seconds_per_batch"] for r in good], "-s", color="black", lw=2, label="PyTorch (ours)"
            )
            bound = [
                (r["threads"], r["achieved_flops"] * r["seconds_per_batch"] / r["peak_flops"])
                for r in good
                if r.get("achieved_flops") and r.get("peak_flops")
            ]
            if bound:
                ax.plot(*zip(*bound, strict=True), ":", color="grey", label="matmul-peak bound (ours)")
        else:
            base = next((r["seconds_per_batch"] for r in good if r["threads"] == 1), None)
            if base:
                ax.plot(
                    xs,
                    [base / r["seconds_per_batch"] for r in good],
                    "-s",
                    color="black",
                    lw=2,
                    label="PyTorch (ours)",
                )
            top = max(paper.DESKTOP_THREADS[-1], max(xs))
            ideal = [t for t in (1, 2, 4, 8, 16, 32) if t <= top]  # points: y = x is curved on a log x axis
            ax.plot(ideal, ideal, ":", color="grey", label="linear")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({1, 2, 4, 8, *(r["threads"] for r in ours)}))
    ax.get_xaxis().set_major_formatter("{x:g}")
    if kind == "time":
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter("{x:g}")
        ax.yaxis.set_minor_formatter("{x:g}")
        ax.tick_params(axis="y", which="minor", labelsize=6)
        ax.set_ylabel("s / mini-batch")
    else:
        ax.set_ylabel("speed-up")
    ax.set_xlabel("CPU threads")
    ax.set_title(network, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
