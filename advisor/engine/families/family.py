"""The words a network family is described in (the registry, advisor/engine/families/__init__.py, uses them):
its roles (the networks a candidate carries, docs/CANDIDATE.md), how it trains (its `Step`) and where its
mini-batch starts. Plain data: every module may import it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# A candidate's `networks` keys: one role per network.
MODEL = "model"
GENERATOR = "generator"  # a GAN's, fed io.latent_size noise values
DISCRIMINATOR = "discriminator"
ENCODER = "encoder"  # a VAE's; its last layer gives mean and log-variance
DECODER = "decoder"  # fed io.latent_size values
STACK = "rbm"  # a DBN's RBMs, pre-trained one by one
CLASSIFIER = "classifier"  # a DBN's, fed the stack's last hidden units
LATENT_ROLES = (GENERATOR, DECODER)

# Which rule starts the mini-batch (training.start_batch, after Shi et al.'s sizes).
BATCH_DENSE = "fully connected"
BATCH_IMAGE = "convolutional"  # smaller on large images
BATCH_RECURRENT = "recurrent"

# The `training.loss` of the families whose step fixes it (the others take their goal's: dense.head); the
# GAN's loss is named after it.
LOSS_ADVERSARIAL = "gan"
LOSS_ELBO = "elbo"
LOSS_CD1 = "cd1"


@dataclass(frozen=True)
class Step:
    """One way of training, step by step. The memory replay (engine/memory.py), the cost model
    (engine/costmodel.py) and the calibration's torch step (calibration/steps.py) each implement every
    step once, in a table keyed by these; families share them."""

    name: str
    train_flops: int  # the catalog path's training FLOPs per forward FLOP of the networks (estimate.py)
    hand_gradients: bool = False  # sets .grad itself (CD-1), outside autograd: DDP cannot reduce it


BACKPROP = Step("backprop", 3)  # forward, loss, backward, update
ADVERSARIAL = Step("adversarial", 6)  # pytorch/examples' DCGAN: D on real and fake, then G through D
VARIATIONAL = Step("variational", 3)  # encoder, reparameterised sample, decoder (the ELBO)
CONTRASTIVE = Step("contrastive", 3, hand_gradients=True)  # CD-1 on every RBM of the model
PRETRAINED = Step("pretrained", 3, hand_gradients=True)  # CD-1 on the stack, then one fine-tuning step
STEPS = (BACKPROP, ADVERSARIAL, VARIATIONAL, CONTRASTIVE, PRETRAINED)


@dataclass(frozen=True)
class Family:
    """One network family: its key (what candidates carry), its title (what pages show), its roles, how it
    trains and where its batch starts. Its layer rules are its module's builders (advisor/engine/families/);
    advisor/engine/choice.py decides when it is offered."""

    key: str
    title: str  # lower case; a page capitalises it where it starts a sentence
    roles: tuple[str, ...]
    step: Step
    batch: str = BATCH_DENSE


Shape = tuple[int, ...]


def network_input(candidate: Mapping[str, Any], role: str) -> Shape:
    """The per-example input shape of one network of a candidate: the data's (an RBM, first of a stack, sees
    it as one vector), the latent code (generator, decoder) or the stack's last hidden units (classifier)."""
    io, networks = candidate["io"], candidate["networks"]
    if role in LATENT_ROLES:
        return (int(io["latent_size"]),)
    if role == CLASSIFIER:
        return (int(networks[STACK][-1]["args"]["hidden"]),)
    shape = tuple(int(s) for s in io["input_shape"])
    layers = networks[role]
    return (math.prod(shape),) if layers and layers[0]["kind"] == "RBM" else shape


def network_inputs(candidate: Mapping[str, Any]) -> dict[str, Shape]:
    """The input shape of each network of a candidate, by role."""
    return {role: network_input(candidate, role) for role in candidate["networks"]}
