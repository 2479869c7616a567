"""`python -m bench advice --variants NAME,...`: the first candidate with named fields overridden, on the same
splits, one JSON row per (data set, split, variant); scores, not timings.

How a rule was chosen: the candidate as recommended next to the set-ups a search or a paper would use, each
override stated in VARIANTS and absolute (it sets every field it is about), so a committed row reruns the
same on a later engine as long as the recommended network is unchanged. A supervised data set's variant is
trained by the probe's loop (`learning.train`, as `bench advice` trains the advised run); `baseline` is the
probe's own classical baseline (the better by cross-validation of a tuned linear model, logistic or ridge
regression, and a tuned RBF SVM). The generation task `mixture` is trained and
scored by `bench.advice_gen.evaluate` (C2ST score, modes covered, samples near a mode).
"""

from __future__ import annotations

import copy
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.contract import Candidate


def _linear(i: int, o: int) -> dict[str, Any]:
    return {"kind": "Linear", "args": {"in_features": i, "out_features": o}}


_RELU: dict[str, Any] = {"kind": "ReLU", "args": {}}


def _training(**fields: Any) -> Callable[[Candidate], None]:
    """Set these training fields; a field given as None is removed (the optimiser's own default)."""

    def apply(c: Candidate) -> None:
        for key, value in fields.items():
            if value is None:
                c["training"].pop(key, None)
            else:
                c["training"][key] = value

    return apply


def _sgd_half(rate: float) -> Callable[[Candidate], None]:
    """The search's pick on diabetes: SGD with momentum 0.9 at half the width."""

    def apply(c: Candidate) -> None:
        from advisor.engine.variation import scaled

        c.update(scaled(c, 0.5))
        _training(optimizer="sgd", learning_rate=rate, momentum=0.9)(c)

    return apply


def _latent(size: int) -> Callable[[Candidate], None]:
    def apply(c: Candidate) -> None:
        c["io"]["latent_size"] = size
        c["networks"]["generator"][0]["args"]["in_features"] = size

    return apply


def _metz_networks(c: Candidate) -> None:
    """Metz et al. 2017, App. A, as in the co-author's public notebook: G 256-128-128-2 ReLU, D 2-128-1 ReLU,
    latent 256 (without its orthogonal initialisation x0.8, input scaling /4 and unrolling)."""
    c["io"]["latent_size"] = 256
    c["networks"]["generator"] = [_linear(256, 128), _RELU, _linear(128, 128), _RELU, _linear(128, 2)]
    c["networks"]["discriminator"] = [_linear(2, 128), _RELU, _linear(128, 1)]


BETA1_HALF = [0.5, 0.999]  # DCGAN §4
# name -> (what it is, the overrides in order)
VARIANTS: dict[str, tuple[str, tuple[Callable[[Candidate], None], ...]]] = {
    "advised": ("the first candidate as recommended", ()),
    "baseline": ("the probe's classical baseline (tuned linear model or RBF SVM)", ()),
    "sgd0.01_half": ("SGD momentum 0.9, rate 0.01, half width", (_sgd_half(0.01),)),
    "sgd0.03_half": ("SGD momentum 0.9, rate 0.03, half width", (_sgd_half(0.03),)),
    "adamw_wd0.01": ("AdamW, weight decay 0.01", (_training(optimizer="adamw", weight_decay=1e-2),)),
    "lr2e-4": (
        "Adam 2e-4, beta1 0.9 (the vector GAN's rate before the gan-rule change)",
        (_training(learning_rate=2e-4, betas=None),),
    ),
    "lr2e-4_epochs500": (
        "Adam 2e-4, beta1 0.9, five times the recommended 100 passes",
        (_training(learning_rate=2e-4, betas=None, epochs=500),),
    ),
    "lr2e-4_b05": ("Adam 2e-4, beta1 0.5 (DCGAN §4)", (_training(learning_rate=2e-4, betas=BETA1_HALF),)),
    "lr2e-4_b05_z100": (
        "Adam 2e-4, beta1 0.5, latent 100 (DCGAN's noise)",
        (
            _training(learning_rate=2e-4, betas=BETA1_HALF),
            _latent(100),
        ),
    ),
    "lr1e-3": ("Adam 1e-3, beta1 0.9 (Kingma & Ba §2)", (_training(learning_rate=1e-3, betas=None),)),
    "lr1e-3_b05": ("Adam 1e-3, beta1 0.5", (_training(learning_rate=1e-3, betas=BETA1_HALF),)),
    "metz": (
        "Metz et al.'s networks and Adam 1e-4, beta1 0.5, batch 64",
        (
            _metz_networks,
            _training(learning_rate=1e-4, betas=BETA1_HALF),
        ),
    ),
    "metz_b512": (
        "the same at its batch 512",
        (
            _metz_networks,
            _training(learning_rate=1e-4, betas=BETA1_HALF, batch_size=512),
        ),
    ),
    "metz_nets_dcgan_opt": (
        "Metz et al.'s networks, DCGAN's Adam (2e-4, beta1 0.5)",
        (
            _metz_networks,
            _training(learning_rate=2e-4, betas=BETA1_HALF),
        ),
    ),
    "metz_nets_kb_opt": (
        "Metz et al.'s networks, Kingma & Ba's Adam (1e-3, beta1 0.9)",
        (
            _metz_networks,
            _training(learning_rate=1e-3, betas=None),
        ),
    ),
}


# the variants about a GAN's rate, betas, latent and networks: applied to the recommendation's GAN, which for
# vectors follows the VAE (rule net.generation.vector)
GAN_VARIANTS = frozenset(n for n in VARIANTS if n.startswith(("lr", "metz")))


def base_of(name: str, candidates: list[Candidate]) -> Candidate:
    """The candidate a variant changes: the GAN for the GAN variants, else the first."""
    if name in GAN_VARIANTS:
        return next(c for c in candidates if c["family"] == "gan")
    return candidates[0]


def variant(name: str, first: Candidate) -> Candidate:
    """`first` with the variant's overrides applied (a copy)."""
    if name not in VARIANTS:
        raise SystemExit(f"unknown variant {name!r}: one of {', '.join(VARIANTS)}")
    c = copy.deepcopy(first)
    for apply in VARIANTS[name][1]:
        apply(c)
    return c


def evaluate(name: str, seed: int, names: list[str], budget: float) -> list[dict[str, Any]]:
    """One row per variant on data set `name`, split `seed`."""
    from advisor.engine import recommend
    from advisor.probe.learning import baseline as baselines
    from advisor.probe.learning import split as splits
    from advisor.probe.learning import train
    from bench import advice_data, advice_gen

    sample, spec, _ = advice_data.dataset(name, seed)
    rec = recommend(spec)
    examples = int(spec["data"]["examples"])
    rows: list[dict[str, Any]] = []
    split = None
    if name not in advice_data.GENERATION:  # the split `bench advice` trains on
        scale = not spec["data"].get("vocab_size")
        split = splits.split(sample, goal=rec["spec"]["goal"], seed=seed, scale=scale)
    for v in names:
        c = variant(v, base_of(v, rec["candidates"]))
        row: dict[str, Any] = {"data": name, "seed": seed, "variant": v}
        started = time.monotonic()
        if split is None:
            out = advice_gen.evaluate(c, examples, seed)["advised"]
            row |= {
                "score": out["score"],
                "modes": out["modes_covered"],
                "high_quality": out["high_quality"],
                "gan_seconds": out["seconds"],
                "best_epoch": out["best_epoch"],
                "epochs": out["epochs"],
                "latent": c["io"]["latent_size"],
            }
        elif v == "baseline":
            row["score"] = baselines.baseline(split)["score"]
        else:
            run = train.train(c, split, seed=seed, full_examples=examples, budget_s=budget)
            row |= {"score": run["score"], "val_score": run["val_score"], "epochs": len(run["epochs"])}
        if v != "baseline":
            row["training"] = c["training"]
        row |= {"wall_seconds": round(time.monotonic() - started, 1), "load": os.getloadavg()}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    """Mean and median held-out score per data set and variant, over the splits."""
    lines = ["| data | variant | splits | mean score | median score |", "|---|---|---:|---:|---:|"]
    for key in dict.fromkeys((r["data"], r["variant"]) for r in rows):
        scores = [r["score"] for r in rows if (r["data"], r["variant"]) == key and r["score"] is not None]
        if scores:
            lines.append(
                f"| {key[0]} | {key[1]} | {len(scores)} | {statistics.mean(scores):.3f} "
                f"| {statistics.median(scores):.3f} |"
            )
    return "\n".join(lines)


def run(datasets: list[str], seeds: int, names: list[str], budget: float, out: Path | None) -> None:
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}: one of {', '.join(VARIANTS)}")
    rows = [row for name in datasets for seed in range(seeds) for row in evaluate(name, seed, names, budget)]
    text = summary(rows)
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "variants.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        (out / "variants.md").write_text(text + "\n", encoding="utf-8")
