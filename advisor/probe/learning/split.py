"""The split step (pipeline.py, step 2): fitting a sample to a task (the goal's targets), the stratified
three-way split, scaling, and on small samples the repeated splits (their seeds; the median and spread of
the scores measured on them).

Careful validation (rule net.shallow.validate, W §III-A-1): the training split trains, the validation
split picks the epoch (early stopping), and the held-out test split, never seen by either, gives the score
that is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

from advisor.contract import Candidate, TrainingRun
from advisor.engine.families import family_of
from advisor.engine.families.family import BACKPROP, PRETRAINED
from advisor.probe.learning.samples import (
    NAMES_NOT_VALUES,
    Sample,
    SampleError,
    SampleFacts,
    as_values,
    numel,
    numeric_names,
    shape_text,
)

if TYPE_CHECKING:
    from typing_extensions import ReadOnly  # typing's own from Python 3.13

    from advisor.probe.learning.clock import Clock
    from advisor.probe.learning.plan import ProbePlan

GOALS = ("classify", "regress", "compress")
METRICS = {"classify": "accuracy", "regress": "r2", "compress": "explained_variance"}
VALIDATION_SHARE = 0.2
TEST_SHARE = 0.2
MIN_PER_CLASS = 3  # one example of each class in each of the three splits
MIN_EXAMPLES = 20

SUPPORTED_TARGETS = {"classify": ("class",), "regress": ("value",), "compress": ("input",)}


class Unsupported(ValueError):
    """A candidate the probe cannot train on labelled data (a GAN, a VAE, a lone RBM, a mismatched target)."""


def trainable(candidate: Candidate, goal: str) -> str | None:
    """Why this candidate cannot be probed for this goal, or None when it can."""
    # a network trained by backpropagation, alone or after pre-training, has an output to score
    if not candidate.get("networks") or family_of(candidate).step not in (BACKPROP, PRETRAINED):
        return f"a {candidate.get('family', '?').upper()} has no supervised output to score"
    io = candidate.get("io")
    target = (io.get("target") if io else None) or "class"
    if target not in SUPPORTED_TARGETS.get(goal, ()):
        return f"its target {target!r} does not fit the goal {goal!r}"
    return None


@dataclass
class Split:
    """Standardised inputs [n, features] (flat; each candidate reshapes them) and targets per split."""

    goal: str
    x_train: np.ndarray
    y_train: np.ndarray | None
    x_val: np.ndarray
    y_val: np.ndarray | None
    x_test: np.ndarray
    y_test: np.ndarray | None
    example_shape: list[int]
    classes: int | None
    # the sample's examples in each part, in the order the parts hold them (a download's split.json)
    indices: dict[str, list[int]] = field(default_factory=dict)

    @property
    def metric(self) -> str:
        return METRICS[self.goal]


def check_fit(
    sample: Sample | SampleFacts, *, goal: str, input_shape: list[int], outputs: int | None
) -> dict[str, list[str]]:
    """What stops this sample serving a task with this goal, input shape and outputs ({} when nothing). It
    reads only the sample's facts (`Sample.describe()`, kept as DataSample.info), so a page can tell which
    tasks a kept sample fits without reading its file."""
    facts = sample.describe() if isinstance(sample, Sample) else sample
    shape, examples, kind = list(facts["input_shape"]), facts["examples"], facts["label_kind"]
    classes = list(facts.get("classes") or [])
    errors: dict[str, list[str]] = {}
    if goal not in GOALS:
        return {"goal": [f"the probe needs a classify, regress or compress task, not {goal!r}"]}
    if shape != list(input_shape) and examples and numel(shape) != numel(input_shape):
        errors["data.input_shape"] = [
            f"the sample's examples have shape {shape_text(shape)} ({numel(shape)} values); the task "
            f"declares {shape_text(input_shape)} ({numel(input_shape)} values)"
        ]
    if examples < MIN_EXAMPLES:
        errors.setdefault("file", []).append(f"{examples} examples; the probe needs at least {MIN_EXAMPLES}")
    if goal == "classify":
        if kind != "class":
            errors["label_column"] = ["classification needs class labels (names or whole numbers)"]
        elif outputs is not None and facts["outputs"] != outputs:
            errors["data.outputs"] = [
                f"the sample has {facts['outputs']} classes ({', '.join(classes[:12])}); "
                f"the task declares data.outputs = {outputs}"
            ]
        else:
            counts = facts.get("class_counts") or []
            few = [f"{classes[i]!r} ({c})" for i, c in enumerate(counts) if c < MIN_PER_CLASS]
            if few:
                errors.setdefault("file", []).append(
                    f"classes with fewer than {MIN_PER_CLASS} examples: {', '.join(few[:5])}; the stratified "
                    "train/validation/test split needs one of each class in each part"
                )
    elif goal == "regress":
        if kind == "none":
            errors["label_column"] = ["regression needs a target column (label_column) or array y"]
        elif kind == "class" and not numeric_names(classes):
            errors["label_column"] = [NAMES_NOT_VALUES]
        else:
            width = 1 if kind == "class" else facts["outputs"]
            if outputs is not None and width != outputs:
                errors["data.outputs"] = [f"the sample has {width} target(s); the task declares {outputs}"]
    return errors


def split(sample: Sample, *, goal: str, seed: int = 0, scale: bool = True) -> Split:
    """`scale=False` keeps the inputs as they are (token ids must stay whole numbers)."""
    from sklearn.model_selection import train_test_split

    errors = check_fit(sample, goal=goal, input_shape=sample.input_shape, outputs=None)
    if errors:
        raise SampleError(errors)
    n = sample.examples
    x = sample.x.reshape(n, -1)
    y: np.ndarray | None = None
    stratify = None
    if goal == "classify":
        y = sample.y
        stratify = y
    elif goal == "regress":
        y = as_values(sample)
    index = np.arange(n)
    n_classes = sample.outputs if goal == "classify" else None
    test_n = max(round(n * TEST_SHARE), n_classes or 1)
    rest, test = train_test_split(index, test_size=test_n, random_state=seed, stratify=stratify)
    val_n = max(round(n * VALIDATION_SHARE), n_classes or 1)
    train, val = train_test_split(
        rest, test_size=val_n, random_state=seed, stratify=None if stratify is None else stratify[rest]
    )
    mean = x[train].mean(axis=0)
    std = x[train].std(axis=0)
    std[std < 1e-6] = 1.0  # a constant feature (an always-blank border pixel) stays zero, not NaN
    if not scale:
        mean, std = np.zeros_like(mean), np.ones_like(std)

    def part(ix: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        return ((x[ix] - mean) / std).astype(np.float32), None if y is None else y[ix]

    (xt, yt), (xv, yv), (xs, ys) = part(train), part(val), part(test)
    indices = {"train": train.tolist(), "validation": val.tolist(), "test": test.tolist()}
    return Split(goal, xt, yt, xv, yv, xs, ys, sample.input_shape, n_classes, indices)


def subsample(data: Split, fraction: float, *, seed: int = 0) -> Split:
    """The first `fraction` of the training split (stratified); validation and test stay whole."""
    from sklearn.model_selection import train_test_split

    n = data.x_train.shape[0]
    keep = max(round(n * fraction), (data.classes or 1) * 2)
    if keep >= n:
        return data
    stratify = data.y_train if data.goal == "classify" else None
    index, _ = train_test_split(np.arange(n), train_size=keep, random_state=seed, stratify=stratify)
    y = None if data.y_train is None else data.y_train[index]
    return Split(
        data.goal,
        data.x_train[index],
        y,
        data.x_val,
        data.y_val,
        data.x_test,
        data.y_test,
        data.example_shape,
        data.classes,
    )


def score(goal: str, y_true: np.ndarray, predicted: np.ndarray) -> float:
    """Higher is better for every goal: accuracy, R² (uniform over targets), or for compression the explained
    variance of the input (1 - reconstruction error / the input's variance)."""
    if goal == "classify":
        return float((predicted == y_true).mean())
    truth = y_true.reshape(len(y_true), -1)
    pred = predicted.reshape(len(predicted), -1)
    total = ((truth - truth.mean(axis=0)) ** 2).sum()
    return float(1.0 - ((truth - pred) ** 2).sum() / max(total, 1e-12))


# --- repeated splits (issue 25 item 3) ----------------------------------------------------------------------

# On a test split this small one split decides by a few examples (one example is worth more than 0.1 of a
# point, and a score near 0.97 has a binomial standard error above half a point): the probe repeats its split
# with other seeds and reports the median and the spread. Larger samples keep one split: their test split
# is steadier, and three runs in one time limit would each train a third as long.
REPEAT_BELOW = 1_000  # test examples
REPEATS = 3


def repeats_for(test_examples: int) -> int:
    return REPEATS if test_examples < REPEAT_BELOW else 1


def spread(scores: Sequence[float | None], seeds: Sequence[int]) -> Spread | None:
    """The median and the range (min-max: with three splits a quartile is one of them) of the scores that
    were measured, with the seeds of their splits; None when fewer than two were."""
    kept = [(s, seed) for s, seed in zip(scores, seeds, strict=True) if s is not None]
    if len(kept) < 2:
        return None
    values = [s for s, _ in kept]
    return {
        "median": float(np.median(values)),
        "low": float(min(values)),
        "high": float(max(values)),
        "splits": len(values),
        "scores": values,
        "seeds": [seed for _, seed in kept],
    }


class Spread(TypedDict):
    """A score over the probe's repeated splits: its median and range, with each split's score and seed."""

    median: float
    low: float
    high: float
    splits: int
    scores: list[float]
    seeds: list[int]


class Reported(TypedDict):
    """What the score a run or a baseline reports is read from: its one split's held-out score, or the
    median of its splits where the probe repeated its split."""

    score: ReadOnly[NotRequired[float | None]]
    spread: ReadOnly[NotRequired[Spread | None]]


def reported(run: Reported | None) -> float | None:
    """The score a run (or the baseline) reports: the median of its splits where the probe repeated its split
    (`spread`), else its one split's held-out score."""
    if not run:
        return None
    spread = run.get("spread")
    return float(spread["median"]) if spread else run.get("score")


def train_score(run: ScoredRun | None) -> float | None:
    """The training split's score at the best epoch: the median over the splits where repeated."""
    if not run:
        return None
    spread = run.get("train_spread")
    return float(spread["median"]) if spread else run.get("train_score")


class ScoredRun(TrainingRun):
    """A network's training run (the train step's TrainingRun) with, where the probe repeated its split,
    the median and spread of its held-out and training scores over the splits (the score step's)."""

    spread: NotRequired[Spread | None]
    train_spread: NotRequired[Spread | None]


# --- the step ----------------------------------------------------------------------------------------


@dataclass
class Splits:
    """The probe's splits by seed, each standardised on its own training part: the first (`seeds[0]`) is
    the probe's own, drawn by the step; the others are drawn when the score step first needs them."""

    sample: Sample
    goal: str
    scale: bool
    seeds: list[int]
    parts: dict[int, Split]

    @property
    def first(self) -> Split:
        return self.parts[self.seeds[0]]

    def draw(self, seed: int) -> Split:
        if seed not in self.parts:
            self.parts[seed] = split(self.sample, goal=self.goal, seed=seed, scale=self.scale)
        return self.parts[seed]


class SplitStage(TypedDict):
    """results.split (docs/CONTRACT.md): each part's size and examples by index, the seed, the sample."""

    train: int
    validation: int
    test: int
    sample: SampleFacts
    indices: dict[str, list[int]]
    seed: int
    seeds: NotRequired[list[int]]  # the seeds of the repeated splits (the supervised probe)


def stage_of(part: Split, facts: SampleFacts, seed: int) -> SplitStage:
    return {
        "train": len(part.x_train),
        "validation": len(part.x_val),
        "test": len(part.x_test),
        "sample": facts,
        "indices": part.indices,
        "seed": seed,
    }


def split_sample(sample: Sample, plan: ProbePlan, clock: Clock, *, scale: bool) -> Splits:
    """The sample split for the plan's goal and seed (`scale=False` keeps token ids whole), with the seeds
    of the splits to repeat on where the test split is small (repeats_for); its stage `split`."""
    first = split(sample, goal=plan.goal, seed=plan.seed, scale=scale)
    count = plan.repeats or repeats_for(len(first.x_test))
    seeds = [plan.seed + i for i in range(max(1, count))]
    facts = sample.describe()
    facts["classes"] = sample.classes[:50]
    stage = stage_of(first, facts, plan.seed)
    stage["seeds"] = seeds
    clock.stage("split", stage)
    return Splits(sample, plan.goal, scale, seeds, {plan.seed: first})


def split_unlabelled(sample: Sample, plan: ProbePlan, clock: Clock) -> Split:
    """The generation probe's split: the supervised one, unstratified; the sample's labels, if any, play no
    part. Its stage `split`."""
    part = split(Sample(sample.x, None, "none"), goal="compress", seed=plan.seed, scale=False)
    clock.stage("split", stage_of(part, sample.describe(), plan.seed))
    return part
