"""Generative families: GAN (DCGAN-style for images) and VAE; fully connected for vectors and series."""

from __future__ import annotations

import math
from typing import Any

from advisor.engine.candidate import Draft, io_dict
from advisor.engine.families import GAN, VAE
from advisor.engine.families.conv import BASE_CHANNELS, decoder_stack, encoder_stack
from advisor.engine.families.family import LOSS_ADVERSARIAL, LOSS_ELBO
from advisor.engine.families.roles import DECODER, DISCRIMINATOR, ENCODER, GENERATOR
from advisor.engine.layers import Layer, layer
from advisor.engine.rules import reason
from advisor.engine.sizing import capacity, round_width
from advisor.engine.units import plural

GAN_LATENT = 100  # Radford et al. 2016 (DCGAN): 100-dimensional uniform noise
LEAKY_SLOPE = 0.2  # DCGAN discriminator


def _is_image(shape: list[int]) -> bool:
    return len(shape) == 3


def _dense_hidden(values: int, spec: dict[str, Any]) -> int:
    return round_width(max(64, values) * capacity(spec))


def _shape_tail(shape: list[int]) -> list[Layer]:
    return [layer("Reshape", shape=list(shape))] if len(shape) > 1 else []


def gan(spec: dict[str, Any]) -> Draft:
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
    reasons = [reason("size.deep.dn", how)]
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


def vae_latent(values: int, spec: dict[str, Any]) -> int:
    """Kingma & Welling 2014 used 2-200 latent dimensions on MNIST; we take 20 to 64 by capacity for
    images, a quarter of the values for vectors, always fewer than the inputs."""
    if values <= 8:
        return max(1, values // 2)
    return max(2, min(values - 1, round(20 * capacity(spec)) if values >= 256 else values // 4))


def vae(spec: dict[str, Any]) -> Draft:
    shape = spec["data"]["input_shape"]
    values = math.prod(shape)
    latent = vae_latent(values, spec)
    base = round_width(BASE_CHANNELS * capacity(spec))
    if _is_image(shape):
        encoder, _ = encoder_stack(shape, base, 2 * latent, None)
        decoder, sizes = decoder_stack(latent, shape, base, "Sigmoid")
    else:
        hidden = _dense_hidden(values, spec)
        encoder = [
            *([layer("Flatten")] if len(shape) > 1 else []),
            layer("Linear", in_features=values, out_features=hidden),
            layer("ReLU"),
            layer("Linear", in_features=hidden, out_features=2 * latent),
        ]
        decoder = [
            layer("Linear", in_features=latent, out_features=hidden),
            layer("ReLU"),
            layer("Linear", in_features=hidden, out_features=values),
            layer("Sigmoid"),
            *_shape_tail(shape),
        ]
        sizes = [hidden]
    reasons = [
        reason(
            "size.ae.bottleneck",
            f"The encoder compresses each example ({values:,} values) into a {latent}-value latent code "
            "(mean and "
            "log-variance); the decoder rebuilds the example from it, so you can steer generation through "
            "it.",
        )
    ]
    io = io_dict(shape, "none", None, latent_size=latent)
    return Draft(VAE.key, "deep", {ENCODER: encoder, DECODER: decoder}, sizes, io, LOSS_ELBO, reasons)
