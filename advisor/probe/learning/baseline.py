"""The baseline step (pipeline.py, step 3): a classical model fitted by scikit-learn beside the networks,
for reference. The supervised probe's (`baseline`): the better, by cross-validation on the training split,
of a tuned linear model and a tuned RBF SVM; on repeated splits, one per split (paired: the same splits the
networks are scored on). The generation probe's (`fit_mixture`): a Gaussian mixture and one Gaussian,
scored by the two-sample test.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import numpy as np

from advisor.engine.units import plural
from advisor.probe.learning.generation import MixtureFit, Scale, mixture_baseline, two_sample_score
from advisor.probe.learning.split import Split, Splits, Spread, score

if TYPE_CHECKING:
    from advisor.probe.learning.clock import Clock
    from advisor.probe.learning.plan import ProbePlan


class TunedModel(TypedDict):
    """One classical model tried: its tuned parameters, cross-validated score (None: too few examples of a
    class to cross-validate) and test and training scores."""

    model: str
    params: dict[str, float]
    cv_score: float | None
    score: float
    train_score: float


class Baseline(TypedDict):
    """results.baseline of the supervised probe: the model chosen, its scores, and every model tried."""

    model: str
    metric: str
    score: float
    train_score: float
    chosen_by: NotRequired[str]  # not for compression (one PCA)
    models: list[TunedModel]
    notes: NotRequired[list[str]]
    spread: NotRequired[Spread | None]  # over the repeated splits (the score step's)


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


def _tuned(name: str, estimator: Any, grid: dict[str, list[float]], data: Split, seed: int) -> TunedModel:
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


def _described(entry: TunedModel) -> str:
    params = ", ".join(f"{k}={v:g}" for k, v in entry["params"].items())
    return f"{entry['model']} ({params})" if params else entry["model"]


def baseline(data: Split, *, code_size: int | None = None, seed: int = 0) -> Baseline:
    """A classical model for reference. Classification: the better (by cross-validation on the training
    split) of logistic regression and an RBF SVM, each tuned over C (and the kernel's width); regression: of
    ridge regression and an RBF support-vector regression (one target); compression: PCA with the code size.
    `models` lists every model tried with its parameters, cross-validated and test scores."""
    from threadpoolctl import threadpool_limits

    # One BLAS/OpenMP thread: these fits are small, and a thread team spinning on a busy machine made them 10
    # to 40 times slower (logistic regression on digits: 4.6 s with the default threads, 0.12 s with one).
    with threadpool_limits(1):
        return _baseline(data, code_size=code_size, seed=seed)


def _baseline(data: Split, *, code_size: int | None, seed: int) -> Baseline:
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


# --- the step ----------------------------------------------------------------------------------------


@dataclass
class Baselines:
    """The baseline of each split drawn (paired with the networks scored on it); the first split's is the
    probe's own. `seconds`: what the first took (another split's costs as much)."""

    splits: Splits
    code_size: int | None
    by_seed: dict[int, Baseline] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def first(self) -> Baseline:
        return self.by_seed[self.splits.seeds[0]]

    def on(self, seed: int) -> Split:
        """The split of this seed, drawn with its baseline where it was not yet."""
        part = self.splits.draw(seed)
        if seed not in self.by_seed:
            self.by_seed[seed] = baseline(part, code_size=self.code_size, seed=seed)
        return part


def fit_baseline(splits: Splits, clock: Clock, *, code_size: int | None) -> Baselines:
    """The classical baseline on the probe's own split (PCA with `code_size` components for compression);
    its stage `baseline`."""
    clock.progress("fitting the baseline")
    fitting = time.monotonic()
    answer = Baselines(splits, code_size)
    answer.on(splits.seeds[0])
    answer.seconds = time.monotonic() - fitting
    clock.stage("baseline", answer.first)
    return answer


class MixtureBaseline(MixtureFit):
    """results.baseline of the generation probe: the mixture's two-sample score, one Gaussian's, and real
    training examples' (what the test gives a perfect generator on this sample)."""

    model: str
    metric: str  # "two_sample"
    score: float
    one_gaussian: float
    real: float


BASELINE_SHARE = 0.15  # of the generation probe's time, at most, for the baseline before the generator trains


def fit_mixture(split: Split, standard: Scale, plan: ProbePlan, clock: Clock) -> MixtureBaseline:
    """One Gaussian and the Gaussian mixture of the best validation log-likelihood, fitted on the
    standardised training split, their samples scored against the held-out split; its stage `baseline`."""
    clock.progress("fitting the baseline: a Gaussian mixture")
    cutoff = time.monotonic() + clock.left() * BASELINE_SHARE
    real_test = standard.to_net(split.x_test)
    single, mixture, picked = mixture_baseline(
        standard.to_net(split.x_train),
        standard.to_net(split.x_val),
        plan.seed,
        should_stop=lambda: clock.stop() or time.monotonic() > cutoff,
    )
    n_test = len(real_test)
    components = plural(picked["components"], "component")
    base: MixtureBaseline = {
        "model": f"Gaussian mixture ({components}, {picked['covariance']} covariance)",
        "metric": "two_sample",
        "score": two_sample_score(real_test, mixture.sample(n_test)[0].astype(np.float32), seed=plan.seed),
        "one_gaussian": two_sample_score(
            real_test, single.sample(n_test)[0].astype(np.float32), seed=plan.seed
        ),
        # real training examples against the held-out ones: what the test gives a perfect generator here
        "real": two_sample_score(real_test, standard.to_net(split.x_train[:n_test]), seed=plan.seed),
        "components": picked["components"],
        "covariance": picked["covariance"],
        "tried": picked["tried"],
        "seconds": picked["seconds"],
    }
    clock.stage("baseline", base)
    return base
