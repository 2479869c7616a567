"""The score step (pipeline.py, step 5): what a trained network's score is, beyond its one split.

The supervised probe (`repeat`): where the sample is small (split.repeats_for), the network trained again on
the other seeds' splits (each stratified, standardised on its own training part) and reported by the median
and spread of its held-out scores, beside the baseline's on the same splits (paired). The generation probe
(`score_generator`): the generator's samples scored against the held-out split by the two-sample test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from advisor.probe.learning.baseline import Baselines
from advisor.probe.learning.generation import EvalRow, Scale, generate, two_sample_score
from advisor.probe.learning.split import ScoredRun, Split, spread
from advisor.probe.learning.train import GeneratorHead, RoleRun, TrainedNet, public, train

if TYPE_CHECKING:
    from advisor.probe.learning.clock import Clock
    from advisor.probe.learning.plan import ProbePlan


def repeat(trained: RoleRun, baselines: Baselines, plan: ProbePlan, clock: Clock) -> ScoredRun:
    """The run again on the other seeds' splits, then its median and spread beside the first split's run
    (`spread`, `train_spread`; its stage sent again), and the baseline's on the same splits (paired).

    The first split's run kept the role's whole share of the time (it is the probe's own: its epochs, its
    curve, its code download). A repeat trains the way it did: at most twice the updates it needed to reach
    its best epoch, and at most 1.5 times its seconds, within the same share of what is left."""
    role, cand, run, share = trained.role, trained.candidate, trained.run, trained.share
    seeds = baselines.splits.seeds[1:]
    updates = 2 * max(1, int(run["best_epoch"] or 1)) * int(run["steps_per_epoch"])
    seconds = 1.5 * max(float(run.get("seconds") or 0.0), 0.5)
    scores: list[float | None] = [run["score"]]
    train_scores: list[float | None] = [run["train_score"]]
    for i, seed in enumerate(seeds):
        # a new split's baseline cannot be interrupted: draw one only with time for it and some training
        if clock.stop() or (seed not in baselines.by_seed and clock.left() < 2 * baselines.seconds + 1.0):
            break
        clock.progress(f"repeating the {role} network: split {i + 2} of {len(seeds) + 1}")
        try:
            part = baselines.on(seed)  # drawn, with its baseline, before the time for training is counted
            again = train(
                cand,
                part,
                budget_s=max(0.1, min(seconds, clock.left() * share / (len(seeds) - i))),
                full_examples=plan.full_examples,
                max_updates=updates,
                seed=seed,
                should_stop=clock.stop,
                device=plan.device,
            )
        except Exception:  # the first split trained it: a repeat that fails leaves the splits measured so far
            break
        scores.append(again["score"])
        train_scores.append(again["train_score"])
    if len(scores) < 2:
        return run
    measured = [plan.seed, *seeds][: len(scores)]
    run["spread"] = spread(scores, measured)
    run["train_spread"] = spread(train_scores, measured)
    clock.stage(role, public(run))
    base = baselines.first
    drawn = [s for s in baselines.splits.seeds if s in baselines.by_seed]  # every split any network was on
    base["spread"] = spread([baselines.by_seed[s]["score"] for s in drawn], drawn)
    clock.stage("baseline", base)
    return run


class GeneratorRun(GeneratorHead):
    """results.generator of the generation probe: the held-out two-sample score of the generator's samples,
    with its training's figures and validation curve."""

    score: float
    val_score: float
    best_epoch: int
    epochs: int
    planned_epochs: int
    updates: int
    planned_updates: int
    batch_size: int
    stopped: str
    seconds: float
    scale: str  # the scale it trained on: "standard", "unit" or "symmetric"
    curve: list[EvalRow]


def score_generator(
    net: TrainedNet, split: Split, standard: Scale, plan: ProbePlan, clock: Clock
) -> GeneratorRun:
    """As many generated examples as the held-out split holds, brought to the standard scale every score is
    taken on, scored against it (0 where the generator drew values that are not finite); stage `generator`."""
    clock.progress("scoring generated examples against the held-out split")
    trained = net.trained
    fake = generate(
        net.candidate, trained["nets"], len(split.x_test), seed=plan.seed, prior=trained.get("prior")
    )
    fake = standard.to_net(net.scale.from_net(fake.reshape(len(fake), -1)))
    real = standard.to_net(split.x_test)
    finite = bool(np.isfinite(fake).all())
    run = GeneratorRun(
        **net.head,
        score=two_sample_score(real, fake, seed=plan.seed) if finite else 0.0,
        val_score=trained["val_score"],
        best_epoch=trained["best_epoch"],
        epochs=trained["epochs"],
        planned_epochs=trained["planned_epochs"],
        updates=trained["updates"],
        planned_updates=trained["planned_updates"],
        batch_size=trained["batch_size"],
        stopped=trained["stopped"],
        seconds=round(trained["seconds"], 3),
        scale=net.scale.kind,
        curve=trained["curve"],
    )
    clock.stage("generator", run)
    return run
