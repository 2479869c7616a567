"""`python -m bench export`: does the code a probe's download gives score what the probe measured?

For each seed: the probe's shallow-first workflow (`learning/probe.py`'s `shallow_first`, the worker's own
code, in this process at `--threads`) on scikit-learn's bundled digits (the demo sample: 1,797 8x8 images),
with a target above reach so that both the shallow and the deep candidate train; then, for each candidate it
trained, the download a probe gives (`advisor.export.files` with the probe's stored results: model.py,
train.py, split.json) written to a folder and run as a user runs it, in a fresh process that cannot import
the advisor (`python -I train.py --data digits.npz`, the NPZ written by the README's one-line command). The
target: train.py's held-out test score is at least the probe's minus one point, on the same split.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from advisor import export
from advisor.engine import recommend
from advisor.probe.learning import samples
from advisor.probe.learning.plan import ProbePlan

HARDWARE = {"cpu_cores": 2, "ram_gb": 8}
TARGET = 0.999  # above reach: the deep candidate trains too
MARGIN = 0.01  # one point of accuracy


def probe(rec: dict[str, Any], sample_path: Path, seed: int, budget: float) -> dict[str, Any]:
    """The probe's stages as a ProbeJob stores them (`results`), and `roles`: each role's candidate index."""
    from advisor.probe.learning.pipeline import shallow_first

    spec, candidates = rec["spec"], rec["candidates"]
    roles = {
        role: next((i for i, c in enumerate(candidates) if c["depth"] == role), None)
        for role in ("shallow", "deep")
    }
    chosen = {
        role: None if i is None else {"index": i, "candidate": candidates[i]} for role, i in roles.items()
    }
    plan = ProbePlan(
        sample_path=str(sample_path),
        goal=spec.get("goal", "classify"),
        target=TARGET,
        full_examples=spec["data"]["examples"],
        shallow=chosen["shallow"],
        deep=chosen["deep"],
        budget_s=budget,
        seed=seed,
        fractions=[],  # no learning curve: it is not what the download is checked against
    )
    results: dict[str, Any] = {"roles": roles}

    def emit(event: dict[str, Any]) -> None:
        if event["type"] == "stage":
            results[event["stage"]] = event["data"]

    shallow_first(plan, emit)
    return results


def run_download(download: export.Download, data: Path, folder: Path, threads: int) -> dict[str, Any]:
    """The download's files in `folder`, train.py run on `data` in an isolated process (no advisor)."""
    folder.mkdir(parents=True)
    for name, text in export.files(download).items():
        (folder / name).write_text(text)
    argv = ["--data", str(data), "--threads", str(threads), "--report", "report.json"]
    started = time.monotonic()
    done = subprocess.run(export.isolated(argv), cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"train.py failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    report: dict[str, Any] = json.loads((folder / "report.json").read_text())
    return {**report, "wall_seconds": round(time.monotonic() - started, 2)}


def evaluate(
    seed: int, threads: int, budget: float, workdir: Path, train_threads: int
) -> list[dict[str, Any]]:
    import torch

    torch.set_num_threads(threads)
    name = "digits"
    spec = {**samples.DEMOS[name]["spec"], "hardware": HARDWARE, "target": {"accuracy": TARGET}}
    rec = {**recommend(spec), "id": None}
    sample_path = workdir / f"{name}-sample.npz"
    samples.save(samples.demo(name), sample_path)
    data = workdir / f"{name}.npz"
    subprocess.run(
        [sys.executable, "-c", export.demo_command(name)], cwd=workdir, check=True, capture_output=True
    )
    results = probe(rec, sample_path, seed, budget)
    rows = []
    for role, index in results["roles"].items():
        run = results.get(role) or {}
        if index is None or run.get("score") is None:
            continue
        split = export.probe_split(results, probe=seed, role=role, sample=name, label_column="", demo=name)
        download = export.Download(rec, index, probe=split)
        got = run_download(download, data, workdir / f"seed{seed}-{role}", train_threads)
        rows.append(
            {
                "seed": seed,
                "role": role,
                "family": rec["candidates"][index]["family"],
                "probe_score": run["score"],
                "probe_best_epoch": run["best_epoch"],
                "probe_epochs": len(run["epochs"]),
                "probe_stopped": run["stopped"],
                "train_py_score": got["test_score"],
                "train_py_best_epoch": got["best_epoch"],
                "train_py_epochs": got["epochs"],
                "train_py_stopped": got["stopped"],
                "train_py_seconds": got["wall_seconds"],
                "difference": got["test_score"] - run["score"],
                "met": got["test_score"] >= run["score"] - MARGIN,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| seed | candidate | probe: test accuracy (best epoch / ran, stopped) | train.py: test accuracy "
        "(best epoch / ran, stopped) | difference (points) | target met |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['seed']} | {r['role']} {r['family']} | {_run(r, 'probe')} | {_run(r, 'train_py')} | "
            f"{100 * r['difference']:+.2f} | {'yes' if r['met'] else 'NO'} |"
        )
    return "\n".join(lines)


def _run(row: dict[str, Any], who: str) -> str:
    score, best, ran, stopped = (row[f"{who}_{k}"] for k in ("score", "best_epoch", "epochs", "stopped"))
    return f"{score:.4f} ({best} / {ran}, {stopped})"


def main(argv: list[str]) -> int:
    from bench import machine

    parser = machine.run_parser("export", __doc__)
    parser.add_argument("--seeds", type=int, default=3, help="probe seeds (each its own split)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the probe (a worker's: 1)")
    parser.add_argument("--train-threads", type=int, default=None, help="train.py's (default: --threads)")
    parser.add_argument("--budget", type=float, default=300.0, help="the probe's time limit, seconds")
    args = parser.parse_args(argv)
    info = machine.describe()
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            rows += evaluate(seed, args.threads, args.budget, Path(tmp), args.train_threads or args.threads)
    threads = {"threads": args.threads, "train_threads": args.train_threads or args.threads}
    text, results = table(rows), {"rows": rows}
    machine.close_run(args.out, ["export", *argv], info, text, results, started=started, **threads)
    return 0 if rows and all(r["met"] for r in rows) else 1
