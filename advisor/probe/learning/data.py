"""Fitting a sample to a task: the goal's targets, the stratified three-way split, scaling, the baseline.

Careful validation (rule net.shallow.validate, W §III-A-1): the training split trains, the validation
split picks the epoch (early stopping), and the held-out test split, never seen by either, gives the score
that is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

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

GOALS = ("classify", "regress", "compress")
METRICS = {"classify": "accuracy", "regress": "r2", "compress": "explained_variance"}
VALIDATION_SHARE = 0.2
TEST_SHARE = 0.2
MIN_PER_CLASS = 3  # one example of each class in each of the three splits
MIN_EXAMPLES = 20

SUPPORTED_TARGETS = {"classify": ("class",), "regress": ("value",), "compress": ("input",)}


class Unsupported(ValueError):
    """A candidate the probe cannot train on labelled data (a GAN, a VAE, a lone RBM, a mismatched target)."""


def trainable(candidate: dict[str, Any], goal: str) -> str | None:
    """Why this candidate cannot be probed for this goal, or None when it can."""
    # a network trained by backpropagation, alone or after pre-training, has an output to score
    if not candidate.get("networks") or family_of(candidate).step not in (BACKPROP, PRETRAINED):
        return f"a {candidate.get('family', '?').upper()} has no supervised output to score"
    target = (candidate.get("io") or {}).get("target") or "class"
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


def baseline(data: Split, *, code_size: int | None = None) -> dict[str, Any]:
    """A classical model for reference: logistic regression, ridge regression or PCA with the code size."""
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression, Ridge

    if data.goal == "classify":
        clf = LogisticRegression(max_iter=500).fit(data.x_train, data.y_train)
        name = "logistic regression"
        test, train = clf.predict(data.x_test), clf.predict(data.x_train)
        assert data.y_test is not None and data.y_train is not None
        result = (score("classify", data.y_test, test), score("classify", data.y_train, train))
    elif data.goal == "regress":
        reg = Ridge(alpha=1.0).fit(data.x_train, data.y_train)
        name = "ridge regression"
        assert data.y_test is not None and data.y_train is not None
        result = (
            score("regress", data.y_test, reg.predict(data.x_test)),
            score("regress", data.y_train, reg.predict(data.x_train)),
        )
    else:
        k = max(1, min(code_size or data.x_train.shape[1] // 4, *data.x_train.shape))
        pca = PCA(n_components=k).fit(data.x_train)
        name = f"PCA with {k} components"
        result = tuple(  # type: ignore[assignment]
            score("compress", x, pca.inverse_transform(pca.transform(x))) for x in (data.x_test, data.x_train)
        )
    return {"model": name, "metric": data.metric, "score": result[0], "train_score": result[1]}
