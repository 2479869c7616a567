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


# The classical baseline (issue 25 item 3): the best of a linear model and an RBF-kernel SVM, each tuned by
# scikit-learn's cross-validation on the training split alone (the validation and test splits stay unseen),
# chosen by its cross-validated score, never by the test score. An SVM's fit grows with the square of the
# examples: past SVM_MAX training examples it is left out (and said so); the grid is searched on at most
# TUNE_MAX of them (stratified), the winner refitted on the whole training split.
SVM_MAX = 10_000
TUNE_MAX = 2_000
TUNE_FOLDS = 3
LINEAR_C = (0.01, 0.1, 1.0, 10.0)
SVM_C = (1.0, 3.0, 10.0, 30.0)
SVM_GAMMA = (0.3, 1.0, 3.0)  # times scikit-learn's "scale" (1 / (features x variance))
RIDGE_ALPHA = (0.01, 0.1, 1.0, 10.0, 100.0)


def _tuned(name: str, estimator: Any, grid: dict[str, list[Any]], data: Split, seed: int) -> dict[str, Any]:
    """One classical model tuned by GridSearchCV on (at most TUNE_MAX of) the training split, refitted on the
    whole training split, scored on the test split."""
    import warnings

    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, train_test_split

    x, y = data.x_train, data.y_train
    assert y is not None and data.y_test is not None and data.y_train is not None
    classify = data.goal == "classify"
    if len(x) > TUNE_MAX:
        x, _, y, _ = train_test_split(
            x, y, train_size=TUNE_MAX, random_state=seed, stratify=y if classify else None
        )
    folds = min(TUNE_FOLDS, int(np.bincount(y).min()) if classify else len(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if folds >= 2:
            cv = (StratifiedKFold if classify else KFold)(folds, shuffle=True, random_state=seed)
            search = GridSearchCV(estimator, grid, cv=cv, refit=False).fit(x, y)
            params, cv_score = search.best_params_, float(search.best_score_)
        else:  # too few examples of a class to cross-validate: the grid's middle, untuned
            params, cv_score = {k: v[len(v) // 2] for k, v in grid.items()}, None
        model = clone(estimator).set_params(**params).fit(data.x_train, data.y_train)
    return {
        "model": name,
        "params": {k: round(float(v), 6) for k, v in params.items()},
        "cv_score": cv_score,
        "score": score(data.goal, data.y_test, model.predict(data.x_test)),
        "train_score": score(data.goal, data.y_train, model.predict(data.x_train)),
    }


def _described(entry: dict[str, Any]) -> str:
    params = ", ".join(f"{k}={v:g}" for k, v in entry["params"].items())
    return f"{entry['model']} ({params})" if params else entry["model"]


def baseline(data: Split, *, code_size: int | None = None, seed: int = 0) -> dict[str, Any]:
    """A classical model for reference. Classification: the better (by cross-validation on the training
    split) of logistic regression and an RBF SVM, each tuned over C (and the kernel's width); regression: of
    ridge regression and an RBF support-vector regression (one target); compression: PCA with the code size.
    `models` lists every model tried with its parameters, cross-validated and test scores."""
    from threadpoolctl import threadpool_limits

    # One BLAS/OpenMP thread: these fits are small, and a thread team spinning on a busy machine made them 10
    # to 40 times slower (logistic regression on digits: 4.6 s with the default threads, 0.12 s with one).
    with threadpool_limits(1):
        return _baseline(data, code_size=code_size, seed=seed)


def _baseline(data: Split, *, code_size: int | None, seed: int) -> dict[str, Any]:
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.svm import SVC, SVR

    n, features = data.x_train.shape
    if data.goal == "compress":
        k = max(1, min(code_size or features // 4, n, features))
        pca = PCA(n_components=k).fit(data.x_train)
        test, train = (
            score("compress", x, pca.inverse_transform(pca.transform(x))) for x in (data.x_test, data.x_train)
        )
        name = f"PCA with {k} components"
        return {"model": name, "metric": data.metric, "score": test, "train_score": train, "models": []}
    variance = float(data.x_train.var()) or 1.0
    gammas = [g / (features * variance) for g in SVM_GAMMA]
    notes: list[str] = []
    if data.goal == "classify":
        tried = [
            _tuned("logistic regression", LogisticRegression(max_iter=500), {"C": list(LINEAR_C)}, data, seed)
        ]
        svm: tuple[str, Any] | None = ("RBF SVM", SVC(kernel="rbf"))
    else:
        tried = [_tuned("ridge regression", Ridge(), {"alpha": list(RIDGE_ALPHA)}, data, seed)]
        one_target = data.y_train is not None and data.y_train.reshape(n, -1).shape[1] == 1
        svm = ("RBF support-vector regression", SVR(kernel="rbf")) if one_target else None
        if svm is None:
            notes.append("support-vector regression left out: it fits one target")
    if svm is not None and n <= SVM_MAX:
        y_svm = data if data.goal == "classify" else _one_target(data)
        tried.append(_tuned(svm[0], svm[1], {"C": list(SVM_C), "gamma": gammas}, y_svm, seed))
    elif svm is not None:
        notes.append(f"{svm[0]} left out: {n:,} training examples (its fit grows with their square)")
    best = max(tried, key=lambda e: -np.inf if e["cv_score"] is None else e["cv_score"])
    return {
        "model": _described(best),
        "metric": data.metric,
        "score": best["score"],
        "train_score": best["train_score"],
        "chosen_by": f"{TUNE_FOLDS}-fold cross-validation on the training split",
        "models": tried,
        "notes": notes,
    }


def _one_target(data: Split) -> Split:
    """The split with its single regression target as a flat vector (an SVR takes [n], not [n, 1])."""
    from dataclasses import replace

    flat = [None if y is None else y.reshape(len(y)) for y in (data.y_train, data.y_val, data.y_test)]
    return replace(data, y_train=flat[0], y_val=flat[1], y_test=flat[2])


# --- repeated splits (issue 25 item 3) ----------------------------------------------------------------------

# On a test split this small one split decides by a few examples (one example is worth more than 0.1 of a
# point, and a score near 0.97 has a binomial standard error above half a point): the probe repeats its split
# with other seeds and reports the median and the spread. Larger samples keep one split: their test split
# is steadier, and three runs in one time limit would each train a third as long.
REPEAT_BELOW = 1_000  # test examples
REPEATS = 3


def repeats_for(test_examples: int) -> int:
    return REPEATS if test_examples < REPEAT_BELOW else 1


def spread(scores: list[float | None], seeds: list[int]) -> dict[str, Any] | None:
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
