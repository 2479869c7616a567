"""The training set-up: mini-batch start (Shi et al.), init scale 0.1 (W), optimiser, rate, epochs."""

from __future__ import annotations

from advisor.contract import Reason, TaskSpec, Training
from advisor.engine import families
from advisor.engine.families import GAN, TCN, VAE
from advisor.engine.families.family import (
    BATCH_IMAGE,
    BATCH_RECURRENT,
    BATCH_TEMPORAL,
    LOSS_CD1,
    LOSS_ELBO_GAUSSIAN,
    Family,
)
from advisor.engine.rules import reason
from advisor.engine.units import plural

INIT_SCALE = 0.1  # W §III-A: start weights "at low values like 0.1"
INIT_FAN_IN = (
    "uniform_fan_in"  # training.init: ±min(init_scale, 1/sqrt(fan-in)) per weight (LeCun et al. 1998)
)
RBM_INIT_SCALE = 0.01  # Hinton 2010, practical guide to RBMs, §8
MOMENTUM = 0.9

# S §4: "mini-batch sizes of 64, 16 and 128 for FCNs, CNNs and RNNs respectively" (CNN: 224x224 images)
BATCH_FULLY_CONNECTED = 64
BATCH_CNN_LARGE = 16
BATCH_RNN = 128
# Bai, Kolter & Koltun 2018's reference implementation (github.com/locuslab/TCN) trains its TCNs at 32 on the
# adding problem, copy memory and characters (64 on sequential MNIST, 16 on words): a temporal convolution's
# work per step is batch x time steps wide, so a small batch keeps the device busy where an LSTM's is not
BATCH_TCN = 32
LARGE_IMAGE_PIXELS = 128 * 128  # at or above this, a CNN's activations per example dominate: start at 16

# Krizhevsky et al. 2012 trained AlexNet for "roughly 90 cycles"; torchvision's reference recipe trains
# AlexNet, GoogLeNet and ResNet-50 for 90 epochs on ImageNet
PUBLISHED_EPOCHS = 90
# A GAN or VAE trained from noise gets this many times the supervised budget: measured on bench advice's
# 8-Gaussian ring (bench/results/advice_amd-epyc-2c_generation/README.md), its two-sample score still rose
# after the supervised budget's 100 passes and stopped rising near 4x (early stopping ends it there)
GENERATOR_EPOCHS = 4

# (optimiser, learning rate, rule) per family; every other network trained by backpropagation gets Adam at
# Kingma & Ba's default rate. Measured (bench/results/advice_intel-xeon-2c/README.md): SGD 0.01 with momentum
# left the digits CNN at 0.96-0.97 where Adam at 1e-3 reaches the tuned search's score.
# DCGAN's Adam (Radford et al. 2016 §4: rate 2e-4, beta1 0.5, both tuned on its convolutional image GANs; it
# found Kingma & Ba's 0.001 "too high" there) is for image GANs only. A fully connected GAN on vectors gets
# Kingma & Ba's defaults (rate 0.001, beta1 0.9) like every other network trained by backpropagation.
# Measured (8 Gaussians in 2-D, bench/results/advice_amd-epyc-2c_gan-rule/README.md): at 2e-4 the GAN
# covered 0 of 8 modes on all five seeds tried (C2ST score 0.24-0.29); at 1e-3 it covers 8/8/6/7/3 modes and
# scores 0.45/0.42/0.29/0.35/0.31 (seed 2 a tie); DCGAN's beta1 0.5 moved the 2e-4 score by -2 to +4 points
# and lowered two of three seeds at 1e-3, so vectors keep beta1 0.9.
# a VAE's new codes drawn from a mixture of Gaussians fitted to its training examples' codes after training
# (ex-post density estimation, Ghosh et al. 2020), not from the standard normal (rule train.prior.mixture)
PRIOR_MIXTURE = "mixture"
_OPTIMISER = {
    GAN.key: ("adam", 2e-4, "train.optimizer.gan"),  # on images
    VAE.key: ("adam", 1e-3, "train.optimizer.vae"),
}
_VECTOR_GAN = ("adam", 1e-3, "train.optimizer.gan.vector")
DCGAN_BETAS = [0.5, 0.999]  # Radford et al. 2016 §4: beta1 0.5 (0.9 "resulted in training oscillation")
_BACKPROP = ("adam", 1e-3, "train.optimizer")
# a TCN that reads a whole sequence: Bai et al.'s TCN classifiers and regressors with Adam, 2e-3 on sequential
# MNIST and 4e-3 on the adding problem; at 2e-3 bench's four sequence tasks reached their targets sooner at
# the same held-out score than at 1e-3 (bench/results/advice_amd-epyc-2c_tcn-rate/README.md). Their next-step
# models used other rates (copy memory 5e-4, music 1e-3), so a generator keeps the default
_TEMPORAL = ("adam", 2e-3, "train.optimizer.tcn")
_PUBLISHED = ("sgd", 0.01, "train.optimizer.published")  # Krizhevsky et al. 2012 §5
_CONTRASTIVE = ("sgd", 0.01, "train.optimizer.cd")  # Hinton 2010 §4: 0.01 is a good start for RBM weights


def start_batch(family: Family, input_shape: list[int], examples: int) -> tuple[int, str]:
    """The mini-batch to start from and why."""
    if family.batch == BATCH_RECURRENT:
        size, why = BATCH_RNN, f"{family.title} over time steps: S used 128 for its LSTMs"
    elif family.batch == BATCH_TEMPORAL:
        size, why = BATCH_TCN, "temporal convolutional network: Bai et al.'s reference code used 32"
    elif (
        family.batch == BATCH_IMAGE
        and len(input_shape) == 3
        and input_shape[1] * input_shape[2] >= LARGE_IMAGE_PIXELS
    ):
        size, why = BATCH_CNN_LARGE, "CNN on large images: S used 16 for AlexNet and ResNet-50 at 224x224"
    else:
        size, why = BATCH_FULLY_CONNECTED, "S used 64 for its fully connected networks"
    if examples < size:
        return examples, f"{why}; cut to your {examples} examples"
    return size, why


def epochs_for(examples: int, accuracy: float | None) -> int:
    """A generous budget for early stopping: small datasets need more passes, a high target more again."""
    if examples < 1_000:
        epochs = 200
    elif examples < 10_000:
        epochs = 100
    elif examples < 100_000:
        epochs = 30
    elif examples < 1_000_000:
        epochs = 20
    else:
        epochs = 10
    if accuracy is not None and accuracy >= 0.95:
        epochs = epochs * 3 // 2
    return epochs


def setup(
    family: str, loss: str, input_shape: list[int], spec: TaskSpec, published: str | None = None
) -> tuple[Training, list[Reason]]:
    """The candidate's `training` dict and the reasons for it."""
    examples = spec["data"]["examples"]
    batch, why = start_batch(families.get(family), input_shape, examples)
    vector_gan = family == GAN.key and len(input_shape) != 3  # fully connected: not an image's (C, H, W)
    optimiser, rate, rule = _VECTOR_GAN if vector_gan else _OPTIMISER.get(family, _BACKPROP)
    if loss == LOSS_CD1:
        optimiser, rate, rule = _CONTRASTIVE
    elif published is not None:
        optimiser, rate, rule = _PUBLISHED
    elif family == TCN.key and spec["task"] != "generation":
        optimiser, rate, rule = _TEMPORAL
    # an accuracy target means nothing to a generation task (its target is target.two_sample)
    accuracy = None if spec["task"] == "generation" else spec["target"]["accuracy"]
    epochs = PUBLISHED_EPOCHS if published is not None else epochs_for(examples, accuracy)
    generator = family in (GAN.key, VAE.key)
    if generator and published is None:
        epochs *= GENERATOR_EPOCHS
    training: Training = {
        "batch_size": batch,
        "init_scale": RBM_INIT_SCALE if loss == "cd1" else INIT_SCALE,
        "optimizer": optimiser,
        "learning_rate": rate,
        "epochs": epochs,
        "loss": loss,
    }
    if loss != LOSS_CD1:
        # init.small with LeCun's cap: measured (bench advice) ±0.1 on the digits CNN's 896-input layer left
        # it at 0.958, the capped draw reaches the search's score
        training["init"] = INIT_FAN_IN
    # a Gaussian VAE (vectors, series) samples new codes from a mixture fitted to its training codes
    prior = family == VAE.key and loss == LOSS_ELBO_GAUSSIAN
    if prior:
        training["prior"] = PRIOR_MIXTURE
    if optimiser == "sgd":
        training["momentum"] = MOMENTUM
        how = f" with momentum {MOMENTUM}."
    elif rule == "train.optimizer.gan":
        training["betas"] = list(DCGAN_BETAS)
        how = f" with β1 = {DCGAN_BETAS[0]:g}, as DCGAN trained its image GANs."
    elif rule == "train.optimizer.gan.vector":
        how = " (DCGAN's smaller 0.0002 was tuned for convolutional image GANs)."
    else:
        how = "."
    reasons = [
        reason(
            "batch.start", f"Start with mini-batches of {batch} ({why}); a calibration can sweep other sizes."
        ),
        reason("init.rbm") if loss == LOSS_CD1 else reason("init.small"),
        reason(rule, f"{'SGD' if optimiser == 'sgd' else 'Adam'} at learning rate {rate:g}{how}"),
        reason(
            "train.epochs",
            f"{'' if family == GAN.key else 'Up to '}{plural(epochs, 'pass', 'passes')} over your "
            f"{plural(examples, 'example')}"
            + (" (the published schedule)" if published is not None else "")
            + (
                f" ({GENERATOR_EPOCHS}x a supervised network's: a generator has no fixed target to settle on)"
                if generator
                else ""
            )
            + (
                ", without early stopping: a GAN's two losses trade off rather than fall, so no hold-out "
                "error says when it is done; judge its samples as it trains."
                if family == GAN.key
                else ", stopping early when the hold-out error stops improving."
            ),
        ),
    ]
    if prior:
        reasons.append(reason("train.prior.mixture"))
    return training, reasons
