"""Generative families: GAN (DCGAN-style for images) and VAE; fully connected for vectors and series."""

from __future__ import annotations

import math

from advisor.contract import Layer, TaskSpec
from advisor.engine.candidate import Draft, io_dict
from advisor.engine.families import GAN, VAE
from advisor.engine.families.conv import BASE_CHANNELS, decoder_stack, encoder_stack
from advisor.engine.families.family import LOSS_ADVERSARIAL, LOSS_ELBO, LOSS_ELBO_GAUSSIAN
from advisor.engine.families.roles import DECODER, DISCRIMINATOR, ENCODER, GENERATOR
from advisor.engine.layers import layer
from advisor.engine.rules import reason
from advisor.engine.sizing import capacity, capacity_reason, round_width
from advisor.engine.units import plural

GAN_LATENT = 100  # Radford et al. 2016 (DCGAN): 100-dimensional uniform noise
LEAKY_SLOPE = 0.2  # DCGAN discriminator


def _is_image(shape: list[int]) -> bool:
    return len(shape) == 3


def _dense_hidden(values: int, spec: TaskSpec) -> int:
    return round_width(max(64, values) * capacity(spec))


def _shape_tail(shape: list[int]) -> list[Layer]:
    return [layer("Reshape", shape=list(shape))] if len(shape) > 1 else []


def gan(spec: TaskSpec) -> Draft:
    shape = spec["data"]["input_shape"]
    values = math.prod(shape)
    base = round_width(BASE_CHANNELS * capacity(spec))
    if _is_image(shape):
        latent = GAN_LATENT
        generator, sizes = decoder_stack(latent, shape, base, "Tanh")
        discriminator, _ = encoder_stack(shape, base, 1, LEAKY_SLOPE)
        upsampling = sum(1 for x in generator if x["kind"] == "ConvTranspose2d")
        how = (
            f"DCGAN-style: the generator grows {latent} noise values through "
            f"{plural(upsampling, 'transposed convolution')} into an image; the discriminator shrinks images "
            "with strided convolutions."
        )
    else:
        latent = max(2, min(GAN_LATENT, values))
        hidden = _dense_hidden(values, spec)
        generator = [
            layer("Linear", in_features=latent, out_features=hidden),
            layer("ReLU"),
            layer("Linear", in_features=hidden, out_features=values),
            *_shape_tail(shape),
        ]
        discriminator = [
            *([layer("Flatten")] if len(shape) > 1 else []),
            layer("Linear", in_features=values, out_features=hidden),
            layer("LeakyReLU", negative_slope=LEAKY_SLOPE),
            layer("Linear", in_features=hidden, out_features=1),
        ]
        sizes = [hidden]
        how = f"Fully connected generator and discriminator with {hidden} hidden units each."
    reasons = [
        reason("size.deep.dn", how),
        *capacity_reason(spec, "Channels" if _is_image(shape) else "Units"),
    ]
    io = io_dict(shape, "none", None, latent_size=latent)
    return Draft(
        GAN.key,
        "deep",
        {GENERATOR: generator, DISCRIMINATOR: discriminator},
        sizes,
        io,
        LOSS_ADVERSARIAL,
        reasons,
    )


def vae_latent(values: int, spec: TaskSpec) -> int:
    """Kingma & Welling 2014 used 2-200 latent dimensions on MNIST; images get 20 to 40 by capacity. Vectors
    and series get a quarter of their values, at least VECTOR_LATENT: a code smaller than the example is a
    compressor's need, not a generator's, and on bench advice's 2-D ring 4 latent values scored above 2
    (0.73 against 0.70, bench/results/advice_amd-epyc-2c_generation/README.md)."""
    if values >= 256:
        return max(2, min(values - 1, round(20 * capacity(spec))))
    return max(VECTOR_LATENT, values // 4)


VECTOR_LATENT = 4
VECTOR_LAYERS = 2  # hidden layers of a fully connected encoder and decoder (measured: one of 64 scored 0.42)


def _stack(inputs: int, hidden: int, outputs: int) -> list[Layer]:
    """VECTOR_LAYERS hidden ReLU layers of `hidden` units from `inputs` to `outputs` values."""
    layers: list[Layer] = []
    for _ in range(VECTOR_LAYERS):
        layers += [layer("Linear", in_features=inputs, out_features=hidden), layer("ReLU")]
        inputs = hidden
    return [*layers, layer("Linear", in_features=inputs, out_features=outputs)]


def vae(spec: TaskSpec) -> Draft:
    """Images: a convolutional encoder and decoder, the decoder's sigmoid a Bernoulli likelihood (Kingma &
    Welling 2014, App. C.1). Vectors and series: fully connected, the decoder Gaussian with one learned
    variance per value (App. C.2; loss elbo_gaussian), so that samples have the data's spread."""
    shape = spec["data"]["input_shape"]
    values = math.prod(shape)
    latent = vae_latent(values, spec)
    base = round_width(BASE_CHANNELS * capacity(spec))
    if _is_image(shape):
        encoder, _ = encoder_stack(shape, base, 2 * latent, None)
        decoder, sizes = decoder_stack(latent, shape, base, "Sigmoid")
        loss, likelihood = LOSS_ELBO, "a Bernoulli likelihood of each pixel"
    else:
        hidden = _dense_hidden(values, spec)
        encoder = [*([layer("Flatten")] if len(shape) > 1 else []), *_stack(values, hidden, 2 * latent)]
        decoder = [*_stack(latent, hidden, values), layer("Gaussian", features=values), *_shape_tail(shape)]
        sizes = [hidden] * VECTOR_LAYERS
        loss, likelihood = LOSS_ELBO_GAUSSIAN, "a Gaussian likelihood whose variance it learns"
    reasons = [
        reason(
            "size.ae.bottleneck",
            f"The encoder maps each example ({values:,} values) to a {latent}-value latent code (mean and "
            f"log-variance); the decoder rebuilds the example from it with {likelihood}, so new examples "
            "come from new codes, and you can steer generation through them.",
        ),
        *capacity_reason(spec, "Hidden layers"),
    ]
    io = io_dict(shape, "none", None, latent_size=latent)
    return Draft(VAE.key, "deep", {ENCODER: encoder, DECODER: decoder}, sizes, io, loss, reasons)
