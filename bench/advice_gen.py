"""The synthetic generation task of `python -m bench advice --data mixture`: data drawn from a known
distribution, so the best achievable score is known by construction.

The data: a ring of 8 Gaussians in 2 dimensions (radius 2, standard deviation 0.1), the standard test of
whether a GAN covers every mode (Metz et al. 2017, "Unrolled Generative Adversarial Networks", ICLR, §3.1;
Srivastava et al. 2017, VEEGAN, NeurIPS, §4.1). 4,000 examples, split 60/20/20.

The score: the product's classifier two-sample test (C2ST, Lopez-Paz & Oquab 2017, "Revisiting Classifier
Two-Sample Tests", ICLR; `advisor.probe.learning.generation.two_sample_score`, the measure of the spec's
`target.two_sample`): a k-nearest-neighbour classifier, by 5-fold cross-validation, tries to tell the
held-out test split from as many generated samples; with its accuracy a the score is 2 x (1 - a) clipped to
[0, 1]: 1 is indistinguishable, 0 perfectly separable. The achievable score is the same test run on samples
of the true distribution (its value below 1 is the test's own noise). Also reported: the modes covered (a
mode counts when at least 20% of its expected share of samples lie within 3 sigma of it) and the share of
samples within 3 sigma of some mode (VEEGAN's "high-quality samples"), and the held-out log-likelihood of the
models that have one.

The first candidate the engine recommends for this spec (random vectors, two-sample target 0.8) is a VAE
with a Gaussian decoder (rule net.generation.vector); a GAN follows. The probe's supervised loop cannot train
either; the generation probe's loop does (`advisor.probe.learning.generation.train_generator`, shared with
the probe): the calibration's own step (`advisor.calibration.make_step`: its layers, initialisation,
optimiser, rate, batch and loss) for the recommended updates (its epochs over the 4,000 examples the spec
declares), keeping the networks of the epoch with the best two-sample score on the validation split (the
"hold-out" its early-stopping reason names); samples come from `generation.generate`. References: the true
model; scikit-learn's Gaussian mixture (the number of components chosen by validation log-likelihood,
`generation.mixture_baseline`, the probe's baseline too), and one Gaussian as the linear baseline.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from advisor.probe.learning import generation

# the probe's own loop and baseline (advisor/probe/learning/generation.py): one implementation for both
train_generator = generation.train_generator
mixture_reference = generation.mixture_baseline

MODES, RADIUS, SIGMA = 8, 2.0, 0.1
COVERED_SHARE = 0.2  # a mode is covered when it gets this share of its expected samples


def centres() -> np.ndarray:
    angle = 2 * np.pi * np.arange(MODES) / MODES
    return np.stack([RADIUS * np.cos(angle), RADIUS * np.sin(angle)], axis=1)  # [K, 2]


def draw(n: int, rng: np.random.Generator) -> np.ndarray:
    pick = rng.integers(0, MODES, size=n)
    return (centres()[pick] + SIGMA * rng.standard_normal((n, 2))).astype(np.float32)  # [n, 2]


def true_log_likelihood(x: np.ndarray) -> float:
    """Mean log-density of `x` under the true mixture (nats per example)."""
    d2 = ((x[:, None, :] - centres()[None]) ** 2).sum(axis=2)  # [n, K]
    log_p = -d2 / (2 * SIGMA**2) - math.log(2 * math.pi * SIGMA**2) - math.log(MODES)
    top = log_p.max(axis=1, keepdims=True)
    return float((top[:, 0] + np.log(np.exp(log_p - top).sum(axis=1))).mean())


def c2st(real: np.ndarray, fake: np.ndarray, seed: int) -> float:
    """Cross-validated accuracy of a kNN classifier telling `real` from `fake` (0.5: indistinguishable): the
    product's own test (advisor/probe/learning/generation.py)."""
    return generation.two_sample_accuracy(real, fake, seed=seed)


def c2st_score(accuracy: float) -> float:
    return generation.score_of(accuracy)


def modes(fake: np.ndarray) -> dict[str, float]:
    d = np.sqrt(((fake[:, None, :] - centres()[None]) ** 2).sum(axis=2))  # [n, K]
    near = d.min(axis=1) <= 3 * SIGMA
    counts = np.bincount(d.argmin(axis=1)[near], minlength=MODES)
    covered = int((counts >= COVERED_SHARE * len(fake) / MODES).sum())
    return {"modes_covered": covered, "high_quality": float(near.mean())}


def judge(real: np.ndarray, fake: np.ndarray, seed: int) -> dict[str, float]:
    accuracy = c2st(real, fake, seed)
    return {"score": c2st_score(accuracy), "c2st_accuracy": accuracy, **modes(fake)}


def evaluate(candidate: dict[str, Any], examples: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(2000 + seed)
    x = draw(examples, rng)
    n_test = n_val = round(examples * 0.2)
    x_test, x_val, x_train = x[:n_test], x[n_test : n_test + n_val], x[n_test + n_val :]
    run = train_generator(candidate, x_train, x_val, examples, seed)
    fake = generation.generate(candidate, run["nets"], n_test, seed=seed, prior=run["prior"])
    advised = judge(x_test, fake, seed)
    single, mixture, picked = mixture_reference(x_train, x_val, seed)
    baseline = judge(x_test, single.sample(n_test)[0].astype(np.float32), seed)
    reference = judge(x_test, mixture.sample(n_test)[0].astype(np.float32), seed)
    truth = judge(x_test, draw(n_test, rng), seed)
    return {
        "metric": "c2st",
        "achievable": truth["score"],
        "advised": {
            **advised,
            "seconds": run["seconds"],
            "epochs": run["epochs"],
            "best_epoch": run["best_epoch"],
            "stopped": "epochs",
            "curve": run["curve"],
        },
        "classical": {
            "linear": baseline["score"],
            "best": f"gaussian mixture ({picked['components']} components)",
            "score": reference["score"],
            "seconds": picked["seconds"],
            "detail": {"one gaussian": baseline, "mixture": reference, "true model": truth},
            "log_likelihood": {
                "true model": true_log_likelihood(x_test),
                "mixture": float(mixture.score(x_test)),
                "one gaussian": float(single.score(x_test)),
            },
        },
        "time_to_target": {"note": "the two-sample target is judged by the score itself"},
    }
