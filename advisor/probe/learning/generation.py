"""The generation score: a classifier two-sample test (C2ST; Lopez-Paz & Oquab 2017, "Revisiting Classifier
Two-Sample Tests", ICLR), the measure of a TaskSpec's `target.two_sample`.

A k-nearest-neighbour classifier, by stratified 5-fold cross-validation, tries to tell held-out real examples
from as many generated ones (each flattened to a vector of values). Its accuracy a is 0.5 when the two
cannot be told apart and 1.0 when they always can; the score is 2 x (1 - a), clipped to [0, 1]: 1 means a
classifier cannot tell generated from real, 0 that it always can. On samples of the true distribution the
score is near 1, below it only by the test's own noise (bench/advice_gen.py measures that noise).

k is the square root of the real examples each fold trains on (at least 1; 25 for 800 real examples, as
bench advice has always used): a k that grows with the sample but slower than it, the usual consistent
choice for kNN, so the test sharpens as the sample grows. Both sets must be on one scale: the generated
examples in the units of the real ones (a generator trained on standardised data is scored after undoing
the standardisation, or both on the standardised scale).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

FOLDS = 5


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
    from advisor.engine.families import GAN, VAE, family_of
    from advisor.engine.families.roles import DECODER, GENERATOR

    family = family_of(candidate)
    role = {GAN.key: GENERATOR, VAE.key: DECODER}.get(family.key)
    if role is None:
        raise ValueError(f"a {family.title} does not generate examples from noise")
    net = nets[role]
    shape = [int(s) for s in candidate["io"]["input_shape"]]
    draw = torch.Generator().manual_seed(seed)
    device = next(net.parameters()).device
    net.eval()
    with torch.no_grad():
        z = torch.randn(n, int(candidate["io"]["latent_size"]), generator=draw).to(device)
        out = net(z).reshape(n, -1)
        noise = getattr(net[-1], "log_variance", None) if isinstance(net, nn.Sequential) else None
        if noise is not None:
            out = out + torch.exp(0.5 * noise).reshape(1, -1) * torch.randn(out.shape, generator=draw).to(
                device
            )
    net.train()
    return np.asarray(out.reshape(n, *shape).cpu().numpy(), dtype=np.float32)
