"""The train step (pipeline.py, step 4): training one recommended candidate on the sample for a bounded
time, scoring it after every epoch (`train`); the probe's roles in turn, the shallow network first and the
deep one only if the shallow one misses the target (`train_role`); and for a generation task the generator
(`train_generator_step`, by generation.train_generator).

The network and its training step are the calibration's own (`advisor.calibration.make_step`): the same
layers, initial scale, optimiser, learning rate, loss and mini-batch the recommendation states; here they
see real data.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from advisor.contract import Candidate, EpochScore, TrainingRun
from advisor.engine.families.roles import CLASSIFIER, MODEL, STACK
from advisor.probe.learning.generation import (
    EvalRow,
    Scale,
    TrainedGenerator,
    generates,
    scale_for,
    train_generator,
)
from advisor.probe.learning.samples import numel, shape_text
from advisor.probe.learning.split import ScoredRun, Split, Unsupported, reported, score, trainable
from advisor.probe.learning.stopping import Plateau

if TYPE_CHECKING:
    from advisor.probe.learning.clock import Clock
    from advisor.probe.learning.plan import PlanEntry, ProbePlan

EVAL_BATCH = 1024
MAX_EPOCHS = 5000


def _model(nets: dict[str, nn.Module]) -> nn.Module:
    if MODEL in nets:
        return nets[MODEL]
    return nn.Sequential(nets[STACK], nets[CLASSIFIER])  # a DBN scores through its stack and classifier


class _Data:
    """The split as tensors in the candidate's own input shape."""

    def __init__(self, candidate: Candidate, data: Split, device: torch.device) -> None:
        io = candidate["io"]
        self.shape = [int(s) for s in io["input_shape"]]
        if numel(self.shape) != data.x_train.shape[1]:
            raise Unsupported(
                f"the candidate takes examples of shape {shape_text(self.shape)}; the sample's have "
                f"{data.x_train.shape[1]} values"
            )
        self.goal = data.goal
        xs = [data.x_train, data.x_val, data.x_test]
        if self.goal == "compress" and candidate["networks"]["model"][-1]["kind"] == "Sigmoid":
            low, high = data.x_train.min(axis=0), data.x_train.max(axis=0)  # a sigmoid output needs [0, 1]
            span = np.where(high - low > 1e-6, high - low, 1.0)
            xs = [np.clip((x - low) / span, 0.0, 1.0).astype(np.float32) for x in xs]
        ids = bool(io.get("vocab_size"))  # token ids feed an embedding: whole numbers, not values
        self.x_train, self.x_val, self.x_test = (
            (torch.from_numpy(x).round().long() if ids else torch.from_numpy(x))
            .reshape(len(x), *self.shape)
            .to(device)
            for x in xs
        )
        self.flat = xs
        self.y_train = self._target(data.y_train)
        self.y_train = None if self.y_train is None else self.y_train.to(device)
        self.y_val, self.y_test = data.y_val, data.y_test

    def _target(self, y: np.ndarray | None) -> torch.Tensor | None:
        if y is None:
            return None
        if self.goal == "classify":
            return torch.from_numpy(y).long()  # [n]
        return torch.from_numpy(y).float()  # [n, k]

    def truth(self, part: str) -> np.ndarray:
        if self.goal == "compress":
            return {"train": self.flat[0], "val": self.flat[1], "test": self.flat[2]}[part]
        y = {"train": self.y_train, "val": self.y_val, "test": self.y_test}[part]
        assert y is not None
        return y.cpu().numpy() if isinstance(y, torch.Tensor) else y


def _outputs(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        out = torch.cat(
            [
                model(x[i : i + EVAL_BATCH]).reshape(min(EVAL_BATCH, len(x) - i), -1)
                for i in range(0, len(x), EVAL_BATCH)
            ]
        )  # [n, outputs]
    model.train()
    return out.cpu()


def _predict(model: nn.Module, x: torch.Tensor, goal: str) -> np.ndarray:
    out = _outputs(model, x)
    return (out.argmax(dim=1) if goal == "classify" else out).numpy()


def _val_loss(out: torch.Tensor, truth: np.ndarray, goal: str) -> float:
    """A continuous companion to the validation score: it still moves while accuracy sits on a step."""
    target = torch.from_numpy(truth)
    if goal == "classify":
        return float(F.cross_entropy(out, target.long()))
    return float(F.mse_loss(out, target.reshape(out.shape).float()))


def train(
    candidate: Candidate,
    data: Split,
    *,
    budget_s: float,
    seed: int = 0,
    max_epochs: int | None = None,
    full_examples: int | None = None,
    max_updates: int | None = None,
    on_epoch: Callable[[TrainingRun], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    device: str = "cpu",
    clock: Callable[[], float] = time.monotonic,
) -> ScoredRun:
    """Train until the candidate's training is done, the validation score has stopped improving, the budget is
    spent or `should_stop()` says so. Reports the held-out test score at the best validation epoch.

    "Done" counts updates, not epochs: the recommendation's epochs over `full_examples` (the data size the
    spec declares) make that many mini-batch updates; a small sample needs as many, i.e. more epochs.
    `clock` (seconds) times the budget and every reported duration; a test passes one it controls."""
    from advisor.calibration import make_step

    reason = trainable(candidate, data.goal)
    if reason:
        raise Unsupported(reason)
    torch.manual_seed(seed)
    dev = torch.device(device)
    tensors = _Data(candidate, data, dev)
    step = make_step(candidate, dev)
    model = _model(step.nets)
    training = candidate.get("training")  # absent from a hand-written candidate: the defaults below
    n = len(tensors.x_train)
    batch = max(1, min(int((training.get("batch_size") if training else None) or 32), n))
    steps_per_epoch = math.ceil(n / batch)
    epochs = int((training.get("epochs") if training else None) or 50)
    updates = epochs * math.ceil(max(full_examples or n, n) / batch)
    updates = min(updates, max_updates or updates)
    epochs_cap = max(1, min(int(max_epochs or MAX_EPOCHS), math.ceil(updates / steps_per_epoch)))
    started = clock()
    generator = torch.Generator().manual_seed(seed)
    run: ScoredRun = {  # a TrainingRun: the score step adds its spread over repeated splits
        "family": candidate.get("family"),
        "depth": candidate.get("depth"),
        "parameters": candidate.get("parameters"),
        "batch_size": batch,
        "steps_per_epoch": steps_per_epoch,
        "train_examples": n,
        "max_epochs": epochs_cap,
        "epochs": [],
        "best_epoch": None,
        "score": None,
        "val_score": None,
        "train_score": None,
        "stopped": "epochs",
    }
    best_state: dict[str, torch.Tensor] | None = None
    best_loss = math.inf
    plateau = Plateau()
    stepping = 0.0  # seconds inside training steps: scoring an epoch costs the same at any training size

    def out_of_time() -> str | None:
        if should_stop is not None and should_stop():
            return "stopped"
        return "time" if clock() - started >= budget_s else None

    for epoch in range(1, epochs_cap + 1):
        order = torch.randperm(n, generator=generator)
        stop = None
        for start in range(0, n, batch):
            ix = order[start : start + batch].to(dev)
            xb = tensors.x_train[ix]
            yb = None if tensors.y_train is None else tensors.y_train[ix]
            tick = clock()
            step.run((xb,) if yb is None else (xb, yb))
            stepping += clock() - tick
            stop = out_of_time()
            if stop:
                break
        if stop and start + batch < n:
            run["stopped"] = stop  # a partial epoch is not scored
            break
        val_out = _outputs(model, tensors.x_val)
        val_pred = val_out.argmax(dim=1).numpy() if data.goal == "classify" else val_out.numpy()
        val = score(data.goal, tensors.truth("val"), val_pred)
        loss = _val_loss(val_out, tensors.truth("val"), data.goal)
        test = score(data.goal, tensors.truth("test"), _predict(model, tensors.x_test, data.goal))
        if not (math.isfinite(val) and math.isfinite(loss)):
            run["stopped"] = "diverged"
            break
        row: EpochScore = {
            "epoch": epoch,
            "val": val,
            "test": test,
            "val_loss": loss,
            "seconds": round(clock() - started, 3),
            "train_seconds": round(stepping, 3),
        }
        run["epochs"].append(row)
        best = run["val_score"]
        if best is None or val > best + 1e-9 or (val >= best - 1e-9 and loss < best_loss):
            run["best_epoch"], run["val_score"], run["score"] = epoch, val, test
            best_state = copy.deepcopy(model.state_dict())
        best_loss = min(best_loss, loss)
        flat = plateau.update(val, loss)
        row["seconds"] = round(clock() - started, 3)
        if on_epoch is not None:
            on_epoch(run)
        if stop:
            run["stopped"] = stop
            break
        if flat:  # neither score nor loss has improved substantially for the patience
            run["stopped"] = "plateau"
            break
    if best_state is not None:
        model.load_state_dict(best_state)
        run["train_score"] = score(
            data.goal, tensors.truth("train"), _predict(model, tensors.x_train, data.goal)
        )
    run["seconds"] = round(clock() - started, 3)
    return run


# --- the step: the probe's roles in turn --------------------------------------------------------------------

MAX_ROWS = 200  # per-epoch rows kept per run in its stage (evenly thinned; the best and the last always kept)
NEXT_OF = "this probe tries only the next step of probe #{}"


def thin(rows: list[EpochScore], best: int | None, limit: int = MAX_ROWS) -> list[EpochScore]:
    if len(rows) <= limit:
        return rows
    step = len(rows) / (limit - 2)
    keep = {int(i * step) for i in range(limit - 2)} | {len(rows) - 1}
    keep |= {i for i, r in enumerate(rows) if r["epoch"] == best}
    return [rows[i] for i in sorted(keep)]


def public(run: TrainingRun) -> TrainingRun:
    """A run as its stage shows it: every field, its epochs thinned to MAX_ROWS."""
    shown = run.copy()
    shown["epochs"] = thin(run["epochs"], run.get("best_epoch"))
    return shown


class Skipped(TypedDict):
    """A role's stage where its candidate could not be trained."""

    skipped: str
    family: str | None


@dataclass
class Tried:
    """What the train step has done so far, role by role: each role's run (None: not trained), why a role
    was not trained (or not needed), the candidates this probe tried (trained, or found it could not), and
    whether no further role is to be trained."""

    runs: dict[str, ScoredRun | None] = field(default_factory=lambda: {"shallow": None, "deep": None})
    notes: dict[str, str | None] = field(default_factory=lambda: {"shallow": None, "deep": None})
    attempted: list[int] = field(default_factory=list)
    done: bool = False


@dataclass
class RoleRun:
    """One role's network trained on the probe's own split, and its share of the time that was left."""

    role: str  # "shallow" or "deep"
    candidate: Candidate
    run: ScoredRun
    share: float


def train_role(role: str, plan: ProbePlan, split: Split, tried: Tried, clock: Clock) -> RoleRun | None:
    """The role's candidate trained on the probe's own split within its share of the time left (its stage
    `shallow` or `deep`, sent as it trains), or None with `tried.notes[role]` saying why not: the deep
    network only where the shallow one missed the target (net.shallow.first), a candidate the goal cannot
    train skipped, one whose training fails reported (it must not sink the other). Records it in `tried`."""
    entry: PlanEntry | None = plan.shallow if role == "shallow" else plan.deep
    if role == "deep":
        shallow = tried.runs["shallow"]
        if shallow is not None and (plan.target is None or (reported(shallow) or 0) >= plan.target):
            tried.notes["deep"] = "deep not needed" if plan.target is not None else "no target"
            tried.done = True
            return None
    if entry is None:  # a next step's probe tries one role; a recommendation may lack one
        missing = (
            "the recommendation lists no deep candidate to try"
            if role == "deep"
            else ("the recommendation lists no shallow candidate")
        )
        tried.notes[role] = NEXT_OF.format(plan.previous) if plan.previous is not None else missing
        tried.done = tried.done or role == "deep"
        return None
    cand = entry["candidate"]
    why = trainable(cand, plan.goal)
    tried.attempted.append(int(entry["index"]))
    if why:
        tried.notes[role] = f"the {role} candidate cannot be probed: {why}"
        clock.stage(role, Skipped(skipped=why, family=cand.get("family")))
        return None
    if clock.stop():
        tried.notes["deep"] = (
            tried.notes["deep"] or "the time limit was reached before the deep network could be trained"
        )
        tried.done = True
        return None
    # shallow and deep each leave time for what follows: the deep network and the learning curve
    share = 0.35 if role == "shallow" and plan.target is not None and plan.deep is not None else 0.5
    try:
        trained = _train_shown(clock, role, cand, split, clock.left() * share, plan)
    except Exception as exc:  # one candidate that cannot train on this data must not sink the other
        why = f"training failed: {type(exc).__name__}: {exc}"[:500]
        tried.notes[role] = f"the {role} candidate {why}"
        clock.stage(role, Skipped(skipped=why, family=cand.get("family")))
        return None
    run = trained.copy()
    tried.runs[role] = run
    return RoleRun(role, cand, run, share)


def _train_shown(
    clock: Clock, role: str, candidate: Candidate, split: Split, budget: float, plan: ProbePlan
) -> ScoredRun:
    """`train`, its stage sent as it trains (at most every EMIT_EVERY_S) and once when it ends."""
    what = f"training the {role} {str(candidate.get('family', '')).upper()}"
    clock.progress(what)

    def on_epoch(run: TrainingRun) -> None:
        if clock.due():
            clock.stage(role, public(run), force=False)
            clock.progress(f"{what}: epoch {run['epochs'][-1]['epoch']}")

    run = train(
        candidate,
        split,
        budget_s=budget,
        full_examples=plan.full_examples,
        seed=plan.seed,
        on_epoch=on_epoch,
        should_stop=clock.stop,
        device=plan.device,
    )
    clock.stage(role, public(run))
    return run


# --- the step for a generation task: the generator ----------------------------------------------------------


class GeneratorHead(TypedDict):
    index: int
    family: str
    metric: str  # "two_sample"


class GeneratorSkipped(GeneratorHead):
    skipped: str


class GeneratorRunning(GeneratorHead):
    curve: list[EvalRow]
    running: bool


@dataclass
class TrainedNet:
    """The generator trained on its own scale (`scale`: where its output can reach), to be scored."""

    candidate: Candidate
    head: GeneratorHead
    scale: Scale
    trained: TrainedGenerator


def train_generator_step(entry: PlanEntry, plan: ProbePlan, split: Split, clock: Clock) -> TrainedNet | str:
    """The generator trained by generation.train_generator within the probe's time (its stage `generator`
    sent at each evaluation), or why it could not be: the verdict's note."""
    candidate = entry["candidate"]
    family = str(candidate.get("family") or "")
    head: GeneratorHead = {"index": entry["index"], "family": family, "metric": "two_sample"}
    why = "" if generates(candidate) else f"a {family.upper()} does not generate examples from noise"
    shape = [int(s) for s in candidate["io"]["input_shape"]] if not why else []
    if not why and numel(shape) != split.x_train.shape[1]:
        values = split.x_train.shape[1]
        why = f"it makes examples of shape {shape_text(shape)}; the sample's have {values} values"
    if why:
        clock.stage("generator", GeneratorSkipped(**head, skipped=why))
        return f"candidate {entry['index'] + 1} cannot be probed: {why}"
    net_scale = Scale.fit(scale_for(candidate), split.x_train)
    what = f"training the {family.upper()}"
    clock.progress(what)
    curve: list[EvalRow] = []

    def on_eval(row: EvalRow) -> None:
        curve.append(row)
        clock.stage("generator", GeneratorRunning(**head, curve=curve, running=True), force=False)
        clock.progress(f"{what}: epoch {row['epoch']}, validation score {row['val']:.2f}")

    def part(x: np.ndarray) -> np.ndarray:
        return net_scale.to_net(x).reshape(len(x), *shape)

    try:
        trained = train_generator(
            candidate,
            part(split.x_train),
            part(split.x_val),
            plan.full_examples,
            plan.seed,
            device=plan.device,
            budget_s=clock.left() * 0.9,  # the rest draws and scores the held-out test
            should_stop=clock.should_stop,
            on_eval=on_eval,
        )
    except Exception as exc:  # a candidate that cannot train on this data is reported, not raised
        why = f"training failed: {type(exc).__name__}: {exc}"[:500]
        clock.stage("generator", GeneratorSkipped(**head, skipped=why))
        return f"the {family.upper()}'s {why}"
    return TrainedNet(candidate, head, net_scale, trained)
