"""`python -m bench explore <what>`: the explorations behind bench advice's rules, one JSON row per line.

- **generators**: generator set-ups (GAN, VAE) on advice's 8-Gaussian ring with their own small loop
  (`bench/explore_generators.py`), scored by the product's two-sample test; one row per (set-up, seed).
- **widths**: networks over time steps at chosen widths and batches (items FAMILY[:WIDTH][@BATCH][+OPTION...]:
  lstm, gru or tcn, its units or channels, its batch, the rules' where left out; options `drop0.1` (dropout
  after each ReLU of a TCN's residual bodies, Bai et al.'s regulariser), `wd0.001` (weight decay), `lr0.0003`
  (learning rate), `last` (a TCN read at its last step instead of max-over-time)) on advice's splits,
  trained by the probe's loop timed by this process's CPU time: the CPU seconds to the target; one row per
  (item, seed).
- **per-batch**: one training step's measured seconds (`advisor.calibration.measure`) of such items at one
  batch, on a series of --steps steps of --features values; one row per item.
- **generation-scale**: advice's ring (the `mixture` task: its data and splits per seed) through the
  generation probe's loop (`generation.train_generator`) on the sample's own units (`raw`, as bench advice
  trains) and on the standardised scale the probe and code downloads train a linear output on (`standard`);
  scored in the sample's units by advice's `judge`; one row per (scale, seed).
- **generation-probe**: the whole generation probe (`pipeline.probe_generation`) on the ring at a time limit,
  as a worker runs it; one row per seed.

Every row is printed as it comes, then a table; `--out DIR` saves both with the machine (results.json's
`rows`, table.md). The figures and what they decided: the README of each `bench/results/advice_*` folder that
names its command.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from advisor.contract import TaskSpec
    from advisor.engine.candidate import Draft

EXPLORATIONS = ("generators", "widths", "per-batch", "generation-scale", "generation-probe")
RING_EXAMPLES = (
    4000  # the ring's size in advice's `mixture` spec: its test and validation splits are 800 each
)
# what each exploration's table shows of its rows (the rows keep everything)
COLUMNS = {
    "generators": ("name", "seed", "score", "modes_covered", "high_quality", "best_epoch", "epochs", "cpu"),
    "widths": ("data", "seed", "item", "params", "score", "best_epoch", "epochs", "ttt_epoch", "ttt_cpu"),
    "per-batch": ("item", "params", "mflop_per_example", "ms_per_batch"),
    "generation-scale": ("family", "seed", "scale", "score", "modes_covered", "best_epoch", "updates"),
    "generation-probe": ("seed", "limit_s", "seconds", "family", "score", "baseline_score", "met"),
}


def _ints(text: str) -> list[int]:
    return [int(s) for s in text.split(",")]


def _draft_item(item: str, spec: TaskSpec) -> tuple[Draft, str]:
    """FAMILY[:WIDTH][@BATCH] -> the engine's draft of that network for `spec` (the rules' width where none is
    given), and the batch text ("" for the rules')."""
    from advisor.engine.families import GRU, LSTM, recurrent, temporal

    family_width, _, batch = item.partition("@")
    family, _, width = family_width.partition(":")
    if family == "tcn":
        return (temporal._tcn(spec, int(width)) if width else temporal.tcn(spec)), batch
    cell = {"lstm": LSTM, "gru": GRU}[family]
    return (recurrent._recurrent(spec, cell, int(width)) if width else recurrent.recurrent(spec, cell)), batch


OPTIONS = {"drop": "dropout", "wd": "weight_decay", "lr": "learning_rate", "last": "last", "max": "max"}


def _options(item: str) -> tuple[str, dict[str, float]]:
    """ITEM+drop0.1+wd0.001+last -> ("ITEM", {"dropout": 0.1, "weight_decay": 0.001, "last": 1.0})."""
    base, *extra = item.split("+")
    found: dict[str, float] = {}
    for text in extra:
        key = next((k for k in OPTIONS if text.startswith(k)), None)
        if key is None:
            raise ValueError(f"unknown option {text!r} in {item!r} (known: {', '.join(OPTIONS)})")
        value = text[len(key) :]
        found[OPTIONS[key]] = float(value) if value else 1.0
    return base, found


def _with_dropout(layers: list[Any], p: float) -> list[Any]:
    """A residual block's body with a Dropout after each ReLU (the TCN's regulariser, Bai et al. §3.3)."""
    from advisor.engine.layers import layer

    out = []
    for item in layers:
        if item["kind"] == "Residual":
            body: list[Any] = []
            for inner in item["args"]["body"]:
                body += [inner, layer("Dropout", p=p)] if inner["kind"] == "ReLU" else [inner]
            item = {**item, "args": {**item["args"], "body": body}}
        out.append(item)
    return out


def _with_pools(layers: list[Any], pools: list[str]) -> list[Any]:
    """A TCN read by these of its readouts only (size.temporal.readout: both), its head resized to match."""
    out: list[Any] = []
    scale = 1.0
    for item in layers:
        if item["kind"] == "PoolOverTime":
            scale = len(pools) / len(item["args"]["pools"])
            item = {**item, "args": {**item["args"], "pools": pools}}
        elif item["kind"] == "Linear" and out and out[-1]["kind"] == "PoolOverTime":
            width = round(item["args"]["in_features"] * scale)
            item = {**item, "args": {**item["args"], "in_features": width}}
        out.append(item)
    return out


def widths(data_name: str, items: list[str], seeds: list[int], budget: float) -> Iterator[dict[str, Any]]:
    from advisor.engine import recommend
    from advisor.engine.candidate import to_candidate
    from advisor.engine.variation import with_weight_decay
    from advisor.probe.learning import curve, train
    from advisor.probe.learning import split as splits
    from bench.advice_data import dataset

    for seed in seeds:
        sample, spec, _ = dataset(data_name, seed)
        rec = recommend(spec)
        clean, target = rec["spec"], spec["target"]["accuracy"]
        split = splits.split(
            sample, goal=str(clean["goal"]), seed=seed, scale=not spec["data"].get("vocab_size")
        )
        # one epoch first, untimed: the process's first run pays torch's one-off costs (as bench advice does)
        train.train(rec["candidates"][-1], split, seed=seed, max_epochs=1, budget_s=60)
        for item in items:
            base, options = _options(item)
            made, batch = _draft_item(base, clean)
            if "dropout" in options:
                made.networks["model"] = _with_dropout(made.networks["model"], options.pop("dropout"))
            pools = [p for p in ("last", "max") if options.pop(p, 0.0)]
            if pools:
                made.networks["model"] = _with_pools(made.networks["model"], pools)
            candidate = to_candidate(made, clean)
            if "weight_decay" in options:
                candidate = with_weight_decay(candidate, options.pop("weight_decay"))
            if batch:
                candidate["training"]["batch_size"] = int(batch)
            # what is left: the learning rate
            candidate["training"].update(options)  # type: ignore[typeddict-item]
            run = train.train(
                candidate,
                split,
                seed=seed,
                full_examples=spec["data"]["examples"],
                budget_s=budget,
                clock=time.process_time,
            )
            hit = curve.epochs_to_target(run, target)
            epoch = hit["epoch"] if hit and hit["reached"] else None
            rows = run["epochs"]
            yield {
                "data": data_name,
                "seed": seed,
                "item": item,
                "params": candidate["parameters"],
                "score": run["score"],
                "best_epoch": run["best_epoch"],
                "epochs": len(rows),
                "cpu_total": rows[-1]["seconds"],
                "ttt_epoch": epoch,
                "ttt_cpu": rows[epoch - 1]["seconds"] if epoch else None,
                "per_epoch_train": rows[-1]["train_seconds"] / len(rows),
                "stopped": run["stopped"],
            }


def per_batch(steps: int, features: int, items: list[str], batch: int) -> Iterator[dict[str, Any]]:
    from advisor.calibration import measure
    from advisor.engine import normalise
    from advisor.engine.candidate import to_candidate

    spec = normalise(
        {
            "task": "sequence",
            "data": {"examples": 5000, "input_shape": [steps, features], "outputs": 4},
            "hardware": {"cpu_cores": 2, "ram_gb": 8},
            "target": {"accuracy": 0.9},
        }
    )
    for item in items:
        made, _ = _draft_item(item, spec)
        candidate = to_candidate(made, spec)
        m = measure(candidate, batch_size=batch, threads=1, min_iterations=5, min_seconds=1.0)
        per_batch_s = m["seconds_per_batch"]
        yield {
            "item": item,
            "params": candidate["parameters"],
            "mflop_per_example": round(candidate["flops_per_example"] / 1e6, 1),
            "ms_per_batch": None if per_batch_s is None else round(per_batch_s * 1e3, 1),
            "batch": batch,
        }


def _ring(seed: int) -> Any:
    import numpy as np

    from bench import advice_gen

    return advice_gen.draw(RING_EXAMPLES, np.random.default_rng(2000 + seed))  # advice_gen.evaluate's draw


def generation_scale(family: str, seeds: list[int], scales: list[str]) -> Iterator[dict[str, Any]]:
    from advisor.engine import recommend
    from advisor.probe.learning import generation
    from bench import advice_gen
    from bench.advice_data import dataset

    for seed in seeds:
        _, spec, _ = dataset("mixture", seed)
        candidate = next(c for c in recommend(spec)["candidates"] if c["family"] == family)
        x = _ring(seed)
        x_test, x_val, x_train = x[:800], x[800:1600], x[1600:]  # advice_gen.evaluate's split
        for kind in scales:
            started = time.monotonic()
            back: Callable[[Any], Any]
            if kind == "raw":
                train, val, back = x_train, x_val, (lambda g: g)
            else:
                fitted = generation.Scale.fit("standard", x_train)
                train, val, back = fitted.to_net(x_train), fitted.to_net(x_val), fitted.from_net
            run = generation.train_generator(candidate, train, val, RING_EXAMPLES, seed)
            fake = back(generation.generate(candidate, run["nets"], 800, seed=seed, prior=run["prior"]))
            yield {
                "what": "scale",
                "family": family,
                "seed": seed,
                "scale": kind,
                **advice_gen.judge(x_test, fake, seed),
                "best_epoch": run["best_epoch"],
                "updates": run["updates"],
                "seconds": round(time.monotonic() - started, 1),
            }


def generation_probe(seeds: list[int], seconds: float) -> Iterator[dict[str, Any]]:
    from advisor.engine import recommend
    from advisor.probe.learning import generation, pipeline, samples
    from advisor.probe.learning.plan import ProbePlan
    from bench.advice_data import dataset

    for seed in seeds:
        _, spec, _ = dataset("mixture", seed)
        candidates = recommend(spec)["candidates"]
        index = generation.generator_index(candidates)
        assert index is not None, "the ring's recommendation lists no generator"
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "ring.npz"
            samples.save(samples.Sample(_ring(seed), None, "none"), path)
            plan = ProbePlan(
                str(path),
                "classify",
                spec["target"]["two_sample"],
                RING_EXAMPLES,
                None,
                {"index": index, "candidate": candidates[index]},
                budget_s=seconds,
                seed=seed,
                task="generation",
            )
            started = time.monotonic()
            verdict = pipeline.probe_generation(plan, lambda event: None)
        took = round(time.monotonic() - started, 1)
        row = {"what": "probe", "seed": seed, "limit_s": seconds, "seconds": took, "verdict": verdict}
        yield {**row, "load_average": list(os.getloadavg())}


def table(what: str, rows: list[dict[str, Any]]) -> str:
    columns = COLUMNS[what]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        flat = {**row, **(row.get("verdict") or {})}  # a probe's row: its verdict's fields
        cells = (
            "-" if v is None else f"{v:.3g}" if isinstance(v, float) else str(v)
            for v in map(flat.get, columns)
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    from bench import machine

    p = machine.run_parser("explore", __doc__)
    p.add_argument(
        "what", choices=EXPLORATIONS, help="what to explore (bench/explore.py says what each does)"
    )
    p.add_argument("configs", nargs="?", default=None, help="generators: a JSON object of named set-ups")
    p.add_argument(
        "--seeds", type=_ints, default=[0], help="comma-separated seeds (advice's splits; default 0)"
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads (1: small networks run fastest)")
    p.add_argument("--data", default="tokens-count", help="widths: advice's data set (bench/advice_data.py)")
    p.add_argument(
        "--items", default=None, help="widths: FAMILY[:WIDTH][@BATCH],...; per-batch: FAMILY[:WIDTH],..."
    )
    p.add_argument("--budget", type=float, default=400.0, help="widths: CPU seconds per training run at most")
    p.add_argument("--steps", type=int, default=128, help="per-batch: time steps of the series")
    p.add_argument("--features", type=int, default=1, help="per-batch: values per time step")
    p.add_argument("--batch", type=int, default=128, help="per-batch: the batch measured")
    p.add_argument("--family", default="vae", help="generation-scale: the recommended generator (vae, gan)")
    p.add_argument("--scales", default="raw,standard", help="generation-scale: raw, standard or both")
    p.add_argument("--limit", type=float, default=90.0, help="generation-probe: the probe's time limit (s)")
    return p


def rows_of(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The exploration `args.what` asks for, one row at a time."""
    if args.what == "generators":
        from bench import explore_generators

        for name, config in json.loads(args.configs).items():
            for seed in args.seeds:
                yield {"name": name, "seed": seed, **explore_generators.run(config, seed)}
    elif args.what == "widths":
        yield from widths(args.data, args.items.split(","), args.seeds, args.budget)
    elif args.what == "per-batch":
        yield from per_batch(args.steps, args.features, args.items.split(","), args.batch)
    elif args.what == "generation-scale":
        yield from generation_scale(args.family, args.seeds, args.scales.split(","))
    else:
        yield from generation_probe(args.seeds, args.limit)


def main(argv: list[str]) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.what == "generators" and args.configs is None:
        p.error("generators needs CONFIGS, a JSON object of named set-ups")
    if args.what in {"widths", "per-batch"} and not args.items:
        p.error(f"{args.what} needs --items FAMILY[:WIDTH][@BATCH],...")
    import torch

    from bench import machine

    torch.set_num_threads(args.threads)
    info = machine.describe()
    started = time.monotonic()
    rows = []
    for row in rows_of(args):
        print(json.dumps(row, default=float), flush=True)
        rows.append(row)
    text = table(args.what, rows)
    machine.close_run(
        args.out, ["explore", *argv], info, text, {"rows": rows}, started=started, threads=args.threads
    )
    return 0
