"""The words a network family is described in (the registry, advisor/engine/families/__init__.py, uses them):
how it trains (its `Step`), where its mini-batch starts, the losses its step fixes; its roles are roles.py's.
Plain data: every module may import it.
"""

from __future__ import annotations

from dataclasses import dataclass

# Which rule starts the mini-batch (training.start_batch, after Shi et al.'s sizes).
BATCH_DENSE = "fully connected"
BATCH_IMAGE = "convolutional"  # smaller on large images
BATCH_RECURRENT = "recurrent"
BATCH_TEMPORAL = "temporal convolutional"  # Bai et al.'s reference implementation of its TCN

# The `training.loss` of the families whose step fixes it (the others take their goal's: dense.head); the
# GAN's loss is named after it.
LOSS_ADVERSARIAL = "gan"
LOSS_ELBO = "elbo"  # the decoder's sigmoid output is Bernoulli (binary cross-entropy), else squared error
# the decoder ends in a `Gaussian` layer: Gaussian negative log-likelihood with its learned variance
LOSS_ELBO_GAUSSIAN = "elbo_gaussian"
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
