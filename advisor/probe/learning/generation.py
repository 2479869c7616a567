"""Generation judged as generation: the score, the training of a generator, and the probe of a generation
task, in one module.

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

The probe (`probe_generation`): an unlabelled sample (labels, if any, are not used) split 60/20/20, a
Gaussian mixture fitted by scikit-learn as the classical baseline, the first candidate that generates from
noise (a GAN or a VAE) trained within the probe's time, and the two-sample score of its samples against the
held-out test split, judged against `target.two_sample`.

Torch is imported inside the functions that train: the web process reads `generator_index` and
`check_fit` without it.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.contract import GenerationVerdict
from advisor.engine.families import GAN, VAE, family_of
from advisor.engine.families.roles import DECODER, GENERATOR
from advisor.engine.units import plural
from advisor.probe.learning.samples import SampleFacts, numel, shape_text

if TYPE_CHECKING:
    from torch import nn

    from advisor.probe.learning.plan import ProbePlan

FOLDS = 5
EVAL_EVERY = 5  # epochs between validation two-sample tests of a generator in training
MIN_EXAMPLES = 50  # a probe's held-out split (20 %) then holds 10, two per fold of the test
SPLIT = (0.6, 0.2, 0.2)  # train, validation (picks the evaluation), held-out test (the score)
MIXTURE_COMPONENTS = (1, 2, 4, 8, 12, 16)  # the baseline's choices, picked by validation log-likelihood
FULL_COVARIANCE_VALUES = 64  # above this many values per example a mixture's components are diagonal
BASELINE_SHARE = 0.15  # of the probe's time, at most, for the baseline before the generator trains
ONE_GAUSSIAN_MARGIN = 0.02  # a generator within this of one fitted Gaussian's score has learned no shape
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


def generate(
    candidate: Mapping[str, Any], nets: Mapping[str, nn.Module], n: int, *, seed: int = 0
) -> np.ndarray:
    """`n` examples drawn from a trained generator, [n, *io.input_shape]: a GAN's generator on N(0, I)
    noise; a VAE's decoder on N(0, I) latent codes, plus its Gaussian decoder's noise (the `Gaussian`
    layer's learned variance) where it has one (a Bernoulli decoder's sigmoid output is its mean, as images
    are shown). The networks are left in training mode."""
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
    on_eval: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
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
    best: dict[str, Any] = {"val": -1.0, "epoch": 0, "states": None}
    curve: list[dict[str, Any]] = []
    stopped, updates, epoch = "epochs", 0, 0

    def halt() -> str | None:
        if should_stop is not None and should_stop():
            return "stopped"
        return "time" if budget_s is not None and time.monotonic() - started >= budget_s else None

    def evaluate(at: int) -> None:
        nonlocal stopped
        fake = generate(candidate, step.nets, len(x_val), seed=seed + at)
        if np.isfinite(fake).all():
            val = two_sample_score(x_val, fake, seed=seed)
        else:  # a diverged generator: nothing it draws passes for real
            val, stopped = 0.0, "diverged"
        row = {"epoch": at, "val": val, "updates": updates, "seconds": round(time.monotonic() - started, 3)}
        curve.append(row)
        if val > best["val"]:
            states = {role: copy.deepcopy(net.state_dict()) for role, net in step.nets.items()}
            best.update(val=val, epoch=at, states=states)
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
        net.load_state_dict(best["states"][role])
    return {
        "nets": step.nets,
        "epochs": epochs if stopped == "epochs" else epoch,
        "planned_epochs": epochs,
        "updates": updates,
        "planned_updates": planned_updates,
        "batch_size": batch,
        "steps_per_epoch": steps_per_epoch,
        "best_epoch": best["epoch"],
        "val_score": best["val"],
        "seconds": time.monotonic() - started,
        "curve": curve,
        "stopped": stopped,
    }


def mixture_baseline(
    x_train: np.ndarray,
    x_val: np.ndarray,
    seed: int = 0,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Any, Any, dict[str, Any]]:
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
    info = {"components": best, "covariance": covariance, "tried": list(fits)}
    return fits[1], fits[best], {**info, "seconds": time.monotonic() - started}


# --- the probe of a generation task --------------------------------------------------------------------

Emit = Callable[[dict[str, Any]], None]


def prepare() -> None:
    """Import what the generation probe uses beyond the supervised one's, before its clock starts."""
    import sklearn.mixture
    import sklearn.neighbors  # noqa: F401


def probe_generation(
    plan: ProbePlan, emit: Emit, should_stop: Callable[[], bool] = lambda: False
) -> GenerationVerdict:
    """The generation probe: split, baseline, the generator trained within the probe's time, its score on
    the held-out split, the verdict; each stage emitted as it comes (a stopped probe keeps what it has)."""
    from advisor.probe.learning import data, samples
    from advisor.probe.learning.probe import _Clock
    from advisor.probe.learning.probe import prepare as prepare_probe

    prepare_probe(plan)
    prepare()
    budget = plan.budget_s if plan.deadline is None else min(plan.budget_s, plan.deadline - time.time())
    clock = _Clock(max(budget, 0.5), emit, should_stop)
    clock.progress("loading the sample")
    sample = samples.load(Path(plan.sample_path))
    role = plan.deep
    # the sample's labels, if any, play no part: the split is the supervised probe's, unstratified
    unlabelled = samples.Sample(sample.x, None, "none")
    split = data.split(unlabelled, goal="compress", seed=plan.seed, scale=False)
    sizes = {"train": len(split.x_train), "validation": len(split.x_val), "test": len(split.x_test)}
    clock.stage("split", {**sizes, "sample": sample.describe(), "indices": split.indices, "seed": plan.seed})
    standard = Scale.fit("standard", split.x_train)  # the scale every score is taken on
    real_test = standard.to_net(split.x_test)

    clock.progress("fitting the baseline: a Gaussian mixture")
    cutoff = time.monotonic() + clock.left() * BASELINE_SHARE
    single, mixture, picked = mixture_baseline(
        standard.to_net(split.x_train),
        standard.to_net(split.x_val),
        plan.seed,
        should_stop=lambda: clock.stop() or time.monotonic() > cutoff,
    )
    n_test = len(real_test)
    components = plural(picked["components"], "component")
    base = {
        "model": f"Gaussian mixture ({components}, {picked['covariance']} covariance)",
        "metric": "two_sample",
        "score": two_sample_score(real_test, mixture.sample(n_test)[0].astype(np.float32), seed=plan.seed),
        "one_gaussian": two_sample_score(
            real_test, single.sample(n_test)[0].astype(np.float32), seed=plan.seed
        ),
        # real training examples against the held-out ones: what the test gives a perfect generator here
        "real": two_sample_score(real_test, standard.to_net(split.x_train[:n_test]), seed=plan.seed),
        **picked,
    }
    clock.stage("baseline", base)

    run: dict[str, Any] | None = None
    note: str | None = None
    if role is None:
        note = "the recommendation lists no candidate that generates from noise (a GAN or a VAE)"
    else:
        run, note = _train(clock, plan, role, split, standard)
    result = generation_verdict(
        family=None if role is None else str(role["candidate"].get("family") or ""),
        target=plan.target,
        run=run,
        baseline=base,
        note=note,
        test_examples=n_test,
    )
    if clock.left() <= 0:
        result["notes"].append("The probe's time limit was reached: later stages ran shorter or not at all.")
    clock.stage("verdict", result)
    return result


def _train(
    clock: Any, plan: ProbePlan, role: dict[str, Any], split: Any, standard: Scale
) -> tuple[dict[str, Any] | None, str | None]:
    """The generator trained on its own scale and scored on the standard one; its stage `generator`."""
    candidate = role["candidate"]
    family = str(candidate.get("family") or "")
    head = {"index": role["index"], "family": family, "metric": "two_sample"}
    if not generates(candidate):
        why = f"a {family.upper()} does not generate examples from noise"
        clock.stage("generator", {**head, "skipped": why})
        return None, f"candidate {role['index'] + 1} cannot be probed: {why}"
    shape = [int(s) for s in candidate["io"]["input_shape"]]
    if numel(shape) != split.x_train.shape[1]:
        values = split.x_train.shape[1]
        why = f"it makes examples of shape {shape_text(shape)}; the sample's have {values} values"
        clock.stage("generator", {**head, "skipped": why})
        return None, f"candidate {role['index'] + 1} cannot be probed: {why}"
    net_scale = Scale.fit(scale_for(candidate), split.x_train)
    what = f"training the {family.upper()}"
    clock.progress(what)
    curve: list[dict[str, Any]] = []

    def on_eval(row: dict[str, Any]) -> None:
        curve.append(row)
        clock.stage("generator", {**head, "curve": curve, "running": True}, force=False)
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
        clock.stage("generator", {**head, "skipped": why})
        return None, f"the {family.upper()}'s {why}"
    clock.progress("scoring generated examples against the held-out split")
    fake = generate(candidate, trained["nets"], len(split.x_test), seed=plan.seed)
    fake = standard.to_net(net_scale.from_net(fake.reshape(len(fake), -1)))
    real = standard.to_net(split.x_test)
    finite = bool(np.isfinite(fake).all())
    run = {
        **head,
        "score": two_sample_score(real, fake, seed=plan.seed) if finite else 0.0,
        "val_score": trained["val_score"],
        "best_epoch": trained["best_epoch"],
        "epochs": trained["epochs"],
        "planned_epochs": trained["planned_epochs"],
        "updates": trained["updates"],
        "planned_updates": trained["planned_updates"],
        "batch_size": trained["batch_size"],
        "stopped": trained["stopped"],
        "seconds": round(trained["seconds"], 3),
        "scale": net_scale.kind,
        "curve": trained["curve"],
    }
    clock.stage("generator", run)
    return run, None


def generation_verdict(
    *,
    family: str | None,
    target: float | None,
    run: dict[str, Any] | None,
    baseline: dict[str, Any] | None,
    note: str | None = None,
    test_examples: int | None = None,
) -> GenerationVerdict:
    """What the generation probe concludes, in one sentence and in fields: the generator's two-sample score
    against the target, with the classical baseline beside it."""
    from advisor.probe.learning.verdict import score_text, target_text

    name = (family or "generator").upper()
    score = None if run is None else run.get("score")
    base = None if baseline is None else baseline.get("score")
    met = None if score is None or target is None else bool(score >= target)
    notes: list[str] = []
    if score is None:
        text = f"No generator was scored: {note or 'nothing could be trained'}."
    else:
        measured = f"its generated examples scored {score_text(score, target)} on the two-sample test"
        if target is None:
            text = f"The {name}'s generated examples scored {score_text(score)} on the two-sample test."
        elif met:
            text = f"The {name} met the two-sample target of {target_text(target)}: {measured}."
        else:
            text = f"The {name} missed the two-sample target of {target_text(target)}: {measured}."
        if base is not None and baseline is not None:
            than = "above" if base > score else "below" if base < score else "level with"
            text += f" A {baseline['model']} fitted by scikit-learn scores {score_text(base)}, {than} it."
        if run is not None and run.get("stopped") in ("time", "stopped"):
            notes.append(
                f"Training stopped at the probe's time limit after {run['updates']:,} of its "
                f"{run['planned_updates']:,} recommended updates: a longer limit may score higher."
            )
        if run is not None and run.get("stopped") == "diverged":
            notes.append("Training diverged (the generator drew values that are not finite numbers).")
        single = None if baseline is None else baseline.get("one_gaussian")
        if single is not None and score <= single + ONE_GAUSSIAN_MARGIN:
            why = " (a VAE whose decoder ignores its latent code draws such a blob: posterior collapse)"
            notes.append(
                f"It scores no better than one Gaussian fitted to the sample ({score_text(single)}): it has "
                f"not learned the data's shape{why if family == 'vae' else ''}."
            )
    if baseline is not None and baseline.get("real") is not None:
        notes.append(
            f"Real training examples score {score_text(baseline['real'])} against the held-out ones: the "
            "most this test gives on this sample (1 minus its own noise)."
        )
    if test_examples is not None and test_examples < 200:
        notes.append(
            f"The held-out split holds {test_examples} examples: with so few the score moves by several "
            "hundredths from one split to another."
        )
    if note and score is not None:
        notes.append(note)
    return {
        "text": text,
        "metric": "two_sample",
        "target": target,
        "chosen": None if score is None else "deep",
        "family": family,
        "score": score,
        "baseline_score": base,
        "real_score": None if baseline is None else baseline.get("real"),
        "met": met,
        "notes": notes,
        "reasons": [],
    }
