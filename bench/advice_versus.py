"""`python -m bench advice --versus FILE`: time to the target of today's first candidate against an earlier
engine's, on the same splits (issue 25's time target: on the sequence and series tasks, at most half the
CPU time of commit be5a774's first candidate, at an equal or better held-out score).

The earlier first candidates are stored once (`--store-first COMMIT --out FILE`): that commit's advisor/ is
checked out into a temporary folder (`git archive`) and its `recommend()` runs, in a child process with
only that folder on its path, on today's specs of the data sets; FILE keeps the candidates with the commit
and the command. Both candidates are then trained by the probe's loop (`learning.train`, early stopping on
the validation split) with the process's CPU time as its clock: each epoch's `seconds` is CPU seconds since
training began, scoring included. Time to the target: the CPU seconds at the first epoch whose held-out
(test) score reaches the spec's target (`curve.epochs_to_target`); the score: the test score at the best
validation epoch. One torch thread, one process: CPU time is what other processes on a shared machine
inflate least.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# run in the earlier engine's folder: today's specs on stdin, its first candidates on stdout
_FIRST = (
    "import json, sys\n"
    "from advisor.engine import recommend\n"
    "specs = json.load(sys.stdin)\n"
    "json.dump({name: recommend(spec)['candidates'][0] for name, spec in specs.items()}, sys.stdout)\n"
)


def store_first(commit: str, names: list[str], out: Path, argv: list[str]) -> None:
    """The first candidates `commit`'s engine recommends for today's specs of `names`, written to `out`."""
    from bench.advice_data import dataset

    specs = {name: dataset(name, 0)[1] for name in names}
    root = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], check=True, capture_output=True, text=True
    ).stdout.strip()
    full = subprocess.run(
        ["git", "rev-parse", commit], check=True, capture_output=True, text=True, cwd=root
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(
            ["git", "archive", full, "advisor"], check=True, capture_output=True, cwd=root
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": folder}
        answer = subprocess.run(
            [sys.executable, "-c", _FIRST],
            input=json.dumps(specs),
            capture_output=True,
            text=True,
            check=True,
            cwd=folder,
            env=env,
        ).stdout
    record = {
        "commit": full,
        "command": "python -m bench advice " + " ".join(argv),
        "specs": specs,
        "first": json.loads(answer),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{len(record['first'])} first candidates of {full[:7]} written to {out}")


def _to_target(
    candidate: dict[str, Any], split: Any, target: float, seed: int, examples: int
) -> dict[str, Any]:
    from advisor.probe.learning import curve, train

    run = train.train(
        candidate, split, seed=seed, full_examples=examples, budget_s=BUDGET_CPU_S, clock=time.process_time
    )
    hit = curve.epochs_to_target(run, target)
    epoch = hit["epoch"] if hit and hit["reached"] else None
    return {
        "first": f"{candidate['family']} {candidate['depth']} {candidate['hidden_sizes']}",
        "parameters": candidate["parameters"],
        "score": run["score"],
        "epochs": len(run["epochs"]),
        "best_epoch": run["best_epoch"],
        "stopped": run["stopped"],
        "cpu_seconds": run["epochs"][-1]["seconds"] if run["epochs"] else None,
        "target_epoch": epoch,
        "cpu_to_target": run["epochs"][epoch - 1]["seconds"] if epoch else None,
    }


BUDGET_CPU_S = 600.0  # CPU seconds per training run at most; early stopping ends them long before


def evaluate(name: str, seed: int, earlier: dict[str, Any]) -> dict[str, Any]:
    from advisor.engine import recommend
    from advisor.probe.learning import split as splits
    from advisor.probe.learning import train
    from bench.advice_data import dataset

    sample, spec, _ = dataset(name, seed)
    rec = recommend(spec)
    split = splits.split(
        sample, goal=rec["spec"]["goal"], seed=seed, scale=not spec["data"].get("vocab_size")
    )
    examples, target = int(spec["data"]["examples"]), float(spec["target"]["accuracy"])
    now = rec["candidates"][0]
    # one epoch first, untimed: the process's first run pays torch's one-off costs
    train.train(now, split, seed=seed, max_epochs=1, budget_s=BUDGET_CPU_S)
    row: dict[str, Any] = {"data": name, "seed": seed, "target": target, "load_before": os.getloadavg()}
    row["earlier"] = _to_target(earlier["first"][name], split, target, seed, examples)
    row["now"] = _to_target(now, split, target, seed, examples)
    row["load_after"] = os.getloadavg()
    old, new = row["earlier"]["cpu_to_target"], row["now"]["cpu_to_target"]
    row["cpu_share"] = new / old if old and new else None
    return row


def summarise(rows: list[dict[str, Any]], commit: str) -> str:
    lines = [
        f"| data | first at {commit[:7]} | first now | its CPU s to target (median) | now | now / then "
        "(median of splits) | held-out score then / now (median) | reached then / now |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for name in dict.fromkeys(r["data"] for r in rows):
        mine = [r for r in rows if r["data"] == name]

        def med(values: list[float | None]) -> str:
            kept = [v for v in values if v is not None]
            return f"{statistics.median(kept):.3g}" if kept else "-"

        lines.append(
            f"| {name} | {mine[0]['earlier']['first']} | {mine[0]['now']['first']} "
            f"| {med([r['earlier']['cpu_to_target'] for r in mine])} "
            f"| {med([r['now']['cpu_to_target'] for r in mine])} "
            f"| {med([r['cpu_share'] for r in mine])} "
            f"| {med([r['earlier']['score'] for r in mine])} / {med([r['now']['score'] for r in mine])} "
            f"| {sum(r['earlier']['target_epoch'] is not None for r in mine)}/{len(mine)} / "
            f"{sum(r['now']['target_epoch'] is not None for r in mine)}/{len(mine)} |"
        )
    return "\n".join(lines)


def run(names: list[str], seeds: int, earlier_file: Path, out: Path | None, argv: list[str]) -> None:
    from bench import machine

    earlier = json.loads(earlier_file.read_text(encoding="utf-8"))
    missing = [n for n in names if n not in earlier["first"]]
    if missing:
        raise SystemExit(f"{earlier_file} has no first candidate for {missing}: store them (--store-first)")
    info = machine.describe()
    started = time.monotonic()
    rows = []
    for name in names:
        for seed in range(seeds):
            row = evaluate(name, seed, earlier)
            print(json.dumps(row), flush=True)
            rows.append(row)
    text = summarise(rows, earlier["commit"])
    print(text)
    print(f"{time.monotonic() - started:.0f} s in all; load {os.getloadavg()}; allocator {info['allocator']}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        meta = {"command": "python -m bench advice " + " ".join(argv), "earlier": earlier["commit"]}
        meta |= machine.finish(info)
        (out / "versus.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1), encoding="utf-8")
        (out / "versus.md").write_text(text + "\n", encoding="utf-8")
