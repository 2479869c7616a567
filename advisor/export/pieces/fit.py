"""The epoch loop every downloaded train.py runs, whatever the family's step: shuffled
mini-batches, a score on the validation split after each epoch, the held-out test
score at the best validation epoch, and early stopping.

A piece of the code a user downloads (advisor/export/training.py).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from advisor.export.pieces.data import Data
from advisor.export.pieces.setup import Config
from advisor.export.pieces.stopping import Plateau

Batch = tuple[torch.Tensor, ...]
Step = Callable[[Batch], torch.Tensor]  # one update; returns its loss


@dataclass
class Scores:
    val: float  # higher is better
    val_loss: float
    test: float


Evaluate = Callable[[str], tuple[float, float]]  # a part's (score, loss)


def outputs(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The network's outputs for a whole part, in chunks, without gradients."""
    model.eval()
    with torch.no_grad():
        out = torch.cat([model(chunk) for chunk in x.split(1024)])
    model.train()
    return out.cpu()


def score(truth: np.ndarray, predicted: np.ndarray, classes: bool) -> float:
    """Accuracy, or 1 - squared error / the truth's variance (R2)."""
    if classes:
        return float((predicted == truth).mean())
    truth = truth.reshape(len(truth), -1)
    predicted = predicted.reshape(len(predicted), -1)
    total = ((truth - truth.mean(axis=0)) ** 2).sum()
    return float(1.0 - ((truth - predicted) ** 2).sum() / max(total, 1e-12))


def supervised(model: nn.Module, data: Data, config: Config) -> Evaluate:
    """Scores a network whose outputs are compared with the targets (or inputs)."""
    classes = config.target in ("class", "class_per_step")

    def evaluate(part: str) -> tuple[float, float]:
        out = outputs(model, data.x[part])
        truth = torch.from_numpy(data.truth[part])
        if classes:
            logits = out.reshape(-1, out.shape[-1])
            loss = F.cross_entropy(logits, truth.reshape(-1).long())
            predicted = out.argmax(dim=-1).numpy()
        else:
            loss = F.mse_loss(out.reshape(len(out), -1), truth.reshape(len(out), -1))
            predicted = out.numpy()
        return score(data.truth[part], predicted, classes), float(loss)

    return evaluate


def metric_of(config: Config) -> str:
    if config.target in ("class", "class_per_step"):
        return "accuracy"
    return "r2" if config.target == "value" else "explained variance"


def fit(
    nets: dict[str, nn.Module],
    data: Data,
    config: Config,
    step: Step,
    evaluate: Evaluate | None,
    max_steps: int | None = None,
) -> dict[str, object]:
    """Train for the recommended updates, scoring each epoch on the validation split;
    keep the best epoch's weights. Without a score (a GAN), run every epoch."""
    x, y = data.x["train"], data.y["train"]
    n = len(x)
    batch = max(1, min(config.batch_size, n))
    steps_per_epoch = math.ceil(n / batch)
    # the recommended epochs count updates at the recommended data size: a smaller
    # data set gets as many updates, i.e. more epochs
    updates = config.epochs * math.ceil(max(config.examples, n) / batch)
    epochs = max(1, min(config.max_epochs, math.ceil(updates / steps_per_epoch)))
    generator = torch.Generator().manual_seed(config.seed)
    plateau = Plateau(config.patience, config.min_gain, config.min_delta)
    metric = metric_of(config)
    report: dict[str, object] = {"metric": metric, "stopped": "epochs"}
    best: Scores | None = None
    best_loss = math.inf
    best_state: dict[str, dict[str, torch.Tensor]] | None = None
    started, done = time.monotonic(), 0
    for epoch in range(1, epochs + 1):
        order = torch.randperm(n, generator=generator)
        losses = []
        for start in range(0, n, batch):
            ix = order[start : start + batch].to(x.device)
            losses.append(step((x[ix],) if y is None else (x[ix], y[ix])).detach())
            done += 1
            if done == max_steps:
                break
        seconds = time.monotonic() - started
        train_loss = float(torch.stack(losses).mean())
        report.update(epochs=epoch, train_loss=train_loss, seconds=round(seconds, 3))
        if evaluate is None:
            print(f"epoch {epoch}/{epochs}: loss {train_loss:.4f}, {seconds:.1f} s")
        else:
            val, loss = evaluate("validation")
            test = evaluate("test")[0]
            if not (math.isfinite(val) and math.isfinite(loss)):
                report["stopped"] = "diverged"
                break
            print(
                f"epoch {epoch}/{epochs}: validation {metric} {val:.4f}"
                f" (loss {loss:.4f}), test {test:.4f}, {seconds:.1f} s"
            )
            if (
                best is None
                or val > best.val + 1e-9
                or (val >= best.val - 1e-9 and loss < best_loss)
            ):
                best = Scores(val, loss, test)
                report.update(best_epoch=epoch, val_score=val, test_score=test)
                best_state = {
                    r: copy.deepcopy(net.state_dict()) for r, net in nets.items()
                }
            best_loss = min(best_loss, loss)
            if plateau.update(val, loss):  # no substantial progress for the patience
                report["stopped"] = "plateau"
                break
        if done == max_steps:
            report["stopped"] = "max steps"
            break
    if evaluate is not None and best is not None and best_state is not None:
        for role, net in nets.items():
            net.load_state_dict(best_state[role])
        report["train_score"] = evaluate("train")[0]
        print(
            f"best epoch {report['best_epoch']}: validation {metric} {best.val:.4f},"
            f" held-out test {metric} {best.test:.4f} ({report['stopped']})"
        )
    return report


def smoke(step: Step, batches: Callable[[], Batch], steps: int) -> dict[str, object]:
    """`steps` updates on random data of the networks' shapes: a check that they run."""
    started = time.monotonic()
    for i in range(1, steps + 1):
        loss = float(step(batches()).detach())
        print(f"step {i}/{steps}: loss {loss:.4f}")
    seconds = time.monotonic() - started
    return {"steps": steps, "loss": loss, "seconds": round(seconds, 3)}
