"""The ring of bench advice's `mixture` task (bench/advice_gen.py: the same data and splits per seed) through
the generation probe's own code: (1) `train_generator` on the sample's own units, as bench advice trains,
and on the standardised scale the probe and code downloads train a linear-output generator on; (2) the
whole probe (`probe_generation`) at a time limit, as a worker runs it.

    PYTHONPATH=. python $DIR/scale.py scale FAMILY SEED [raw|standard ...]
    PYTHONPATH=. python $DIR/scale.py probe SEED SECONDS

($DIR: bench/results/advice_amd-epyc-2c_generation-probe.)
Each prints one JSON line (scores in the sample's units, by bench advice's `judge`).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from advisor.engine import recommend
from advisor.probe.learning import generation, samples
from advisor.probe.learning.plan import ProbePlan
from bench import advice_gen
from bench.advice_data import dataset


def ring(seed: int) -> np.ndarray:
    return advice_gen.draw(4000, np.random.default_rng(2000 + seed))  # advice_gen.evaluate's draw


def scale(family: str, seed: int, kinds: list[str]) -> None:
    _, spec, _ = dataset("mixture", seed)
    candidate = next(c for c in recommend(spec)["candidates"] if c["family"] == family)
    x = ring(seed)
    x_test, x_val, x_train = x[:800], x[800:1600], x[1600:]  # advice_gen.evaluate's split
    for kind in kinds:
        started = time.monotonic()
        if kind == "raw":
            train, val, back = x_train, x_val, (lambda g: g)
        else:
            fitted = generation.Scale.fit("standard", x_train)
            train, val, back = fitted.to_net(x_train), fitted.to_net(x_val), fitted.from_net
        run = generation.train_generator(candidate, train, val, 4000, seed)
        fake = back(generation.generate(candidate, run["nets"], 800, seed=seed))
        row = {
            "what": "scale",
            "family": family,
            "seed": seed,
            "scale": kind,
            **advice_gen.judge(x_test, fake, seed),
            "best_epoch": run["best_epoch"],
            "updates": run["updates"],
            "seconds": round(time.monotonic() - started, 1),
        }
        print(json.dumps(row), flush=True)


def probe(seed: int, seconds: float) -> None:
    _, spec, _ = dataset("mixture", seed)
    candidates = recommend(spec)["candidates"]
    index = generation.generator_index(candidates)
    assert index is not None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ring.npz"
        samples.save(samples.Sample(ring(seed), None, "none"), path)
        plan = ProbePlan(
            str(path),
            "classify",
            spec["target"]["two_sample"],
            4000,
            None,
            {"index": index, "candidate": candidates[index]},
            budget_s=seconds,
            seed=seed,
            task="generation",
        )
        started = time.monotonic()
        verdict = generation.probe_generation(plan, lambda event: None)
    row = {"what": "probe", "seed": seed, "limit_s": seconds, "seconds": round(time.monotonic() - started, 1)}
    print(json.dumps({**row, "verdict": verdict, "load_average": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1] == "scale":
        scale(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    else:
        probe(int(sys.argv[2]), float(sys.argv[3]))
