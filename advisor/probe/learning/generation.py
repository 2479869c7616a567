"""Generation judged as generation: the score of generated examples and the training of a generator, shared
by the generation probe (pipeline.probe_generation, whose steps call these) and bench advice.

The score: a classifier two-sample test (C2ST; Lopez-Paz & Oquab 2017, "Revisiting Classifier Two-Sample
Tests", ICLR), the measure of a TaskSpec's `target.two_sample`. A k-nearest-neighbour classifier, by
stratified 5-fold cross-validation, tries to tell held-out real examples from as many generated ones (each
flattened to a vector of values). Its accuracy a is 0.5 when the two cannot be told apart and 1.0 when they
always can; the score is 2 x (1 - a), clipped to [0, 1]: 1 means a classifier cannot tell generated from
real, 0 that it always can. On samples of the true distribution the score is near 1, below it only by the
test's own noise (bench/advice_gen.py measures that noise).

k is the square root of the real examples each fold trains on (at least 1; 25 for 800 real examples, as
bench advice has always used): a k that grows with the sample but slower than it, the usual consistent
choice for kNN, so the test sharpens as the sample grows. Both sets must be on one scale: the generated
examples in the units of the real ones (a generator trained on standardised data is scored after undoing
the standardisation, or both on the standardised scale).

The training (`train_generator`, shared by the probe and bench advice): the recommendation's own networks,
initialisation, optimiser, rate, batch and loss, built and stepped by `advisor.calibration.make_step`
(adversarial for a GAN, the ELBO for a VAE, Gaussian or Bernoulli decoder as its loss says), for the
updates its epochs make at the declared data size, keeping the networks of the evaluation whose samples
scored best against the validation split.

The probe (pipeline.probe_generation): an unlabelled sample (labels, if any, are not used) split 60/20/20
(split.split_unlabelled), a Gaussian mixture fitted by scikit-learn as the classical baseline
(baseline.fit_mixture, from `mixture_baseline`), the first candidate that generates from noise (a GAN or a
VAE) trained within the probe's time (train.train_generator_step), and the two-sample score of its samples
against the held-out test split (score.score_generator), judged against `target.two_sample`
(verdict.generation_verdict).

Torch is imported inside the functions that train: the web process reads `generator_index` and
`check_fit` without it.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from advisor.engine.families import GAN, VAE, family_of
from advisor.engine.families.roles import DECODER, GENERATOR
from advisor.probe.learning.samples import SampleFacts, numel, shape_text

if TYPE_CHECKING:
    import torch
    from torch import nn

FOLDS = 5
EVAL_EVERY = 5  # epochs between validation two-sample tests of a generator in training
MIN_EXAMPLES = 50  # a probe's held-out split (20 %) then holds 10, two per fold of the test
SPLIT = (0.6, 0.2, 0.2)  # train, validation (picks the evaluation), held-out test (the score)
MIXTURE_COMPONENTS = (1, 2, 4, 8, 12, 16)  # the baseline's choices, picked by validation log-likelihood
FULL_COVARIANCE_VALUES = 64  # above this many values per example a mixture's components are diagonal
_ROLES = {GAN.key: GENERATOR, VAE.key: DECODER}  # the network that draws examples from noise
_STRUCTURAL = ("Reshape", "Flatten", "Gaussian", "Unflatten")  # layers that do not bound the output


def generates(candidate: Mapping[str, Any]) -> bool:
    """Whether the candidate draws examples from noise (a GAN's generator, a VAE's decoder): what the
    generation probe trains and scores."""
    return bool(candidate.get("networks")) and family_of(candidate).key in _ROLES


def generator_index(candidates: Sequence[Mapping[str, Any]]) -> int | None:
    """The first candidate that generates from noise: the one a generation probe trains."""
    return next((i for i, c in enumerate(candidates) if generates(c)), None)


def check_fit(facts: SampleFacts, *, input_shape: list[int]) -> dict[str, list[str]]:
    """What stops a sample with these facts serving a generation task ({} when nothing): its examples'
    shape, and enough of them for a held-out test. Labels are neither needed nor used."""
    shape, examples = list(facts["input_shape"]), facts["examples"]
    errors: dict[str, list[str]] = {}
    if shape != list(input_shape) and numel(shape) != numel(input_shape):
        errors["data.input_shape"] = [
            f"the sample's examples have shape {shape_text(shape)} ({numel(shape)} values); the task "
            f"declares {shape_text(input_shape)} ({numel(input_shape)} values)"
        ]
    if examples < MIN_EXAMPLES:
        errors["file"] = [
            f"{examples} examples; a generation probe needs at least {MIN_EXAMPLES} (a fifth of them are "
            "held out to score the generated examples against)"
        ]
    return errors


def neighbours(examples: int) -> int:
    """k for a test of `examples` real and as many generated examples: the square root of the real examples
    in a fold's training part."""
    return max(1, round(math.sqrt(examples * (FOLDS - 1) / FOLDS)))


def two_sample_accuracy(real: np.ndarray, generated: np.ndarray, *, seed: int = 0) -> float:
    """The cross-validated accuracy of a kNN classifier telling `real` from `generated` ([n, ...] each, the
    same n; flattened per example): 0.5 indistinguishable, 1.0 always told apart."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    if len(real) != len(generated) or len(real) < FOLDS:
        raise ValueError(f"need as many generated as real examples, at least {FOLDS} of each")
    x = np.concatenate([real.reshape(len(real), -1), generated.reshape(len(generated), -1)])
    y = np.r_[np.zeros(len(real)), np.ones(len(generated))]
    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed)
    classifier = KNeighborsClassifier(neighbours(len(real)))
    return float(cross_val_score(classifier, x, y, cv=folds).mean())


def score_of(accuracy: float) -> float:
    """The two-sample score of a C2ST accuracy: 2 x (1 - accuracy) clipped to [0, 1]."""
    return min(1.0, max(0.0, 2.0 * (1.0 - accuracy)))


def two_sample_score(real: np.ndarray, generated: np.ndarray, *, seed: int = 0) -> float:
    """`target.two_sample`'s measure: 1 when a classifier cannot tell `generated` from `real`, 0 when it
    always can."""
    return score_of(two_sample_accuracy(real, generated, seed=seed))


PRIOR_COMPONENTS = 10  # a fitted prior's Gaussians (Ghosh et al. 2020, §4: ex-post density estimation)


def fit_prior(
    candidate: Mapping[str, Any], nets: Mapping[str, nn.Module], x_train: np.ndarray, *, seed: int = 0
) -> Any:
    """The prior a VAE whose training says `prior: mixture` draws its codes from (rule train.prior.mixture):
    a mixture of PRIOR_COMPONENTS Gaussians (scikit-learn, full covariances) fitted to the encoder's means
    of `x_train` (on the scale it trained on). None for any other generator: it draws from N(0, I)."""
    if family_of(candidate) is not VAE or candidate["training"].get("prior") != "mixture":
        return None
    import torch
    from sklearn.mixture import GaussianMixture

    encoder = nets["encoder"]
    device = next(encoder.parameters()).device
    encoder.eval()
    with torch.no_grad():
        inputs = torch.from_numpy(np.ascontiguousarray(x_train, dtype=np.float32)).to(device)
        means = encoder(inputs).chunk(2, dim=1)[0].cpu().numpy().astype(np.float64)
    encoder.train()
    components = max(1, min(PRIOR_COMPONENTS, len(means) // 2))
    return GaussianMixture(components, covariance_type="full", random_state=seed).fit(means)


def generate(
    candidate: Mapping[str, Any], nets: Mapping[str, nn.Module], n: int, *, seed: int = 0, prior: Any = None
) -> np.ndarray:
    """`n` examples drawn from a trained generator, [n, *io.input_shape]: a GAN's generator on N(0, I)
    noise; a VAE's decoder on latent codes from `prior` (fit_prior's mixture) where it has one, else N(0,
    I), plus its Gaussian decoder's noise (the `Gaussian` layer's learned variance) where it has one (a
    Bernoulli decoder's sigmoid output is its mean, as images are shown). The networks are left in training
    mode."""
    import torch

    role = _ROLES.get(family_of(candidate).key)
    if role is None:
        raise ValueError(f"a {family_of(candidate).title} does not generate examples from noise")
    net = nets[role]
    shape = [int(s) for s in candidate["io"]["input_shape"]]
    draw = torch.Generator().manual_seed(seed)
    device = next(net.parameters()).device
    # the Gaussian layer holds the decoder's learned log-variance; a series' decoder reshapes after it
    noise = next((p for name, p in net.named_parameters() if name.endswith("log_variance")), None)
    net.eval()
    with torch.no_grad():
        if prior is not None:
            codes, _ = prior.sample(n)  # grouped by component: the two-sample test reads no order
            z = torch.from_numpy(codes.astype(np.float32)).to(device)
        else:
            z = torch.randn(n, int(candidate["io"]["latent_size"]), generator=draw).to(device)
        out = net(z).reshape(n, -1)
        if noise is not None:
            out = out + torch.exp(0.5 * noise).reshape(1, -1) * torch.randn(out.shape, generator=draw).to(
                device
            )
    net.train()
    return np.asarray(out.reshape(n, *shape).cpu().numpy(), dtype=np.float32)


# --- the scale a generator trains on -------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """Per value, the affine map from the sample's units to the scale a network trains on: standardised
    (mean 0, standard deviation 1) for a linear output, [0, 1] under a sigmoid, [-1, 1] under a tanh (each
    from the training split's range; held-out values outside it are clipped)."""

    kind: str  # "standard", "unit" or "symmetric"
    shift: np.ndarray  # [values]
    span: np.ndarray  # [values], never 0

    @classmethod
    def fit(cls, kind: str, x: np.ndarray) -> Scale:
        flat = x.reshape(len(x), -1).astype(np.float64)
        if kind == "standard":
            shift, span = flat.mean(axis=0), flat.std(axis=0)
        else:
            shift, span = flat.min(axis=0), flat.max(axis=0) - flat.min(axis=0)
        span = np.where(span > 1e-6, span, 1.0)  # a constant value (a blank border pixel) stays put
        return cls(kind, shift, span)

    def to_net(self, x: np.ndarray) -> np.ndarray:
        u = (x.reshape(len(x), -1) - self.shift) / self.span
        if self.kind != "standard":
            u = np.clip(u, 0.0, 1.0)
        if self.kind == "symmetric":
            u = 2.0 * u - 1.0
        return np.asarray(u.reshape(x.shape), dtype=np.float32)

    def from_net(self, x: np.ndarray) -> np.ndarray:
        u = x.reshape(len(x), -1).astype(np.float64)
        if self.kind == "symmetric":
            u = (u + 1.0) / 2.0
        return np.asarray((u * self.span + self.shift).reshape(x.shape), dtype=np.float32)


def scale_for(candidate: Mapping[str, Any]) -> str:
    """The scale the candidate's generating network can reach: its last activation bounds it."""
    role = _ROLES.get(family_of(candidate).key)
    network = (candidate.get("networks") or {}).get(role or "", [])
    layers = [x for x in network if x["kind"] not in _STRUCTURAL]
    last = layers[-1]["kind"] if layers else ""
    return {"Sigmoid": "unit", "Tanh": "symmetric"}.get(last, "standard")


# --- training a generator (the probe's and bench advice's one loop) ------------------------------------


class EvalRow(TypedDict):
    """One evaluation of a generator in training: its samples' two-sample score against the validation
    split."""

    epoch: int
    val: float
    updates: int
    seconds: float  # since training began


class TrainedGenerator(TypedDict):
    """`train_generator`'s answer: the networks (at the best evaluation) and how their training went."""

    nets: dict[str, nn.Module]
    epochs: int
    planned_epochs: int
    updates: int
    planned_updates: int
    batch_size: int
    steps_per_epoch: int
    best_epoch: int
    val_score: float
    seconds: float
    curve: list[EvalRow]
    stopped: str  # "epochs", "time", "stopped" or "diverged"
    prior: Any  # fit_prior's mixture at the best evaluation (None: the generator draws from N(0, I))


@dataclass
class _Best:
    """The best evaluation so far and the networks' weights then."""

    val: float = -1.0
    epoch: int = 0
    states: dict[str, dict[str, torch.Tensor]] = field(default_factory=dict)
    prior: Any = None  # fit_prior's mixture then (it depends on the encoder of that moment)


def train_generator(
    candidate: Mapping[str, Any],
    x_train: np.ndarray,
    x_val: np.ndarray,
    examples: int,
    seed: int = 0,
    *,
    device: str = "cpu",
    budget_s: float | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_eval: Callable[[EvalRow], None] | None = None,
) -> TrainedGenerator:
    """The candidate (a GAN or a VAE) trained by the calibration's own step for its recommended updates
    (its epochs over `examples`, the data size the spec declares), its samples scored against `x_val` every
    EVAL_EVERY epochs and at the end, keeping the networks of the best evaluation. `x_train` and `x_val`
    are on the scale the networks train on. Stops early (scoring where it stopped) when `budget_s` seconds
    are spent ("time") or `should_stop()` says so ("stopped"); `on_eval(row)` after each evaluation."""
    import torch

    from advisor.calibration import make_step

    torch.manual_seed(seed)
    step = make_step(candidate, device)
    training = candidate["training"]
    n = len(x_train)
    batch = max(1, min(int(training["batch_size"]), n))
    planned_updates = int(training["epochs"]) * math.ceil(examples / batch)
    steps_per_epoch = math.ceil(n / batch)
    epochs = math.ceil(planned_updates / steps_per_epoch)
    data = torch.from_numpy(np.ascontiguousarray(x_train)).to(device)
    order_draw = torch.Generator().manual_seed(seed)
    started = time.monotonic()
    best = _Best()
    curve: list[EvalRow] = []
    stopped, updates, epoch = "epochs", 0, 0

    def halt() -> str | None:
        if should_stop is not None and should_stop():
            return "stopped"
        return "time" if budget_s is not None and time.monotonic() - started >= budget_s else None

    def evaluate(at: int) -> None:
        nonlocal stopped
        prior = fit_prior(candidate, step.nets, x_train, seed=seed)
        fake = generate(candidate, step.nets, len(x_val), seed=seed + at, prior=prior)
        if np.isfinite(fake).all():
            val = two_sample_score(x_val, fake, seed=seed)
        else:  # a diverged generator: nothing it draws passes for real
            val, stopped = 0.0, "diverged"
        row: EvalRow = {
            "epoch": at,
            "val": val,
            "updates": updates,
            "seconds": round(time.monotonic() - started, 3),
        }
        curve.append(row)
        if val > best.val:
            best.val, best.epoch = val, at
            best.states = {role: copy.deepcopy(net.state_dict()) for role, net in step.nets.items()}
            best.prior = prior
        if on_eval is not None:
            on_eval(row)

    for epoch in range(1, epochs + 1):
        order = torch.randperm(n, generator=order_draw)
        for start in range(0, n, batch):
            halted = halt()
            if halted:
                stopped = halted
                break
            step.run((data[order[start : start + batch].to(data.device)],))
            updates += 1
        if stopped != "epochs":
            break
        if epoch % EVAL_EVERY == 0 or epoch == epochs:
            evaluate(epoch)
            if stopped != "epochs":
                break
    if not curve or (stopped in ("time", "stopped") and curve[-1]["updates"] != updates):
        evaluate(epoch)  # where it stopped, a partial epoch included
    for role, net in step.nets.items():
        net.load_state_dict(best.states[role])
    return {
        "prior": best.prior,
        "nets": step.nets,
        "epochs": epochs if stopped == "epochs" else epoch,
        "planned_epochs": epochs,
        "updates": updates,
        "planned_updates": planned_updates,
        "batch_size": batch,
        "steps_per_epoch": steps_per_epoch,
        "best_epoch": best.epoch,
        "val_score": best.val,
        "seconds": time.monotonic() - started,
        "curve": curve,
        "stopped": stopped,
    }


class MixtureFit(TypedDict):
    """The mixture `mixture_baseline` chose: its components (by validation log-likelihood), covariance, the
    counts tried, the seconds the fits took."""

    components: int
    covariance: str  # "full" or "diag"
    tried: list[int]
    seconds: float


def mixture_baseline(
    x_train: np.ndarray,
    x_val: np.ndarray,
    seed: int = 0,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Any, Any, MixtureFit]:
    """One Gaussian (the linear baseline) and the Gaussian mixture whose component count has the best
    validation log-likelihood (scikit-learn), from MIXTURE_COMPONENTS up to the training examples; full
    covariances up to FULL_COVARIANCE_VALUES values per example, diagonal above (a full one has values²
    parameters per component). Fits in order of size and stops adding when `should_stop()` says so."""
    from sklearn.mixture import GaussianMixture

    train, val = x_train.reshape(len(x_train), -1), x_val.reshape(len(x_val), -1)
    covariance = "full" if train.shape[1] <= FULL_COVARIANCE_VALUES else "diag"
    started = time.monotonic()
    fits: dict[int, Any] = {}
    for k in (k for k in MIXTURE_COMPONENTS if k <= len(train)):
        if fits and should_stop is not None and should_stop():
            break
        fits[k] = GaussianMixture(k, covariance_type=covariance, n_init=3, random_state=seed).fit(train)
    best = max(fits, key=lambda k: fits[k].score(val))
    info: MixtureFit = {
        "components": best,
        "covariance": covariance,
        "tried": list(fits),
        "seconds": time.monotonic() - started,
    }
    return fits[1], fits[best], info
