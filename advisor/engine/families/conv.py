"""Convolutional families: CNN (shrinking stage by stage) and DN (growing), plus the image encoder/decoder
stacks the GAN and VAE reuse."""

from __future__ import annotations

import math

from advisor.contract import Layer, TaskSpec
from advisor.engine.candidate import Draft, io_dict
from advisor.engine.families import AE, CNN, DN
from advisor.engine.families.dense import head
from advisor.engine.families.roles import MODEL
from advisor.engine.layers import layer
from advisor.engine.rules import reason
from advisor.engine.sizing import capacity, capacity_reason, round_width

BASE_CHANNELS = 32
MAX_STAGES = 6
MIN_SIDE = 3  # stop pooling before a side drops below this


def stages_for(height: int, width: int) -> int:
    """How many 2x poolings keep both sides >= MIN_SIDE (at most MAX_STAGES)."""
    stages, side = 0, min(height, width)
    while stages < MAX_STAGES and side // 2 >= MIN_SIDE:
        side //= 2
        stages += 1
    return stages


def cnn(spec: TaskSpec) -> Draft:
    """Conv 3x3 -> ReLU -> MaxPool 2 per stage, channels doubling while pixels quarter (activations halve)."""
    channels, height, width = spec["data"]["input_shape"]
    target, outputs, loss = head(spec)
    assert outputs is not None
    base = round_width(BASE_CHANNELS * capacity(spec))
    stages = stages_for(height, width)
    model: list[Layer] = []
    sizes: list[int] = []
    c, h, w = channels, height, width
    for stage in range(max(stages, 1)):
        out = base * 2**stage
        model += [layer("Conv2d", in_channels=c, out_channels=out, kernel_size=3, padding=1), layer("ReLU")]
        if stages:
            model.append(layer("MaxPool2d", kernel_size=2))
            h, w = h // 2, w // 2
        c = out
        sizes.append(out)
    model += [layer("Flatten"), layer("Linear", in_features=c * h * w, out_features=outputs)]
    reasons = [
        reason(
            "size.deep.cnn",
            f"{len(sizes)} convolution stage{'' if len(sizes) == 1 else 's'} of "
            f"{', '.join(map(str, sizes))} channels: each halves the "
            "image's "
            f"height and width ({height}x{width} -> {h}x{w}), so every stage passes on fewer values than the "
            "one before.",
        ),
        *capacity_reason(spec, "Channels"),
    ]
    return Draft(
        CNN.key,
        "deep",
        {MODEL: model},
        sizes,
        io_dict([channels, height, width], target, outputs),
        loss,
        reasons,
    )


def growth_plan(height: int, width: int, limit: int = 4) -> int:
    """How many 2x upsamplings reach (height, width) exactly from a start of at least 3 pixels a side."""
    n = 0
    while n < limit and height % 2 ** (n + 1) == 0 and width % 2 ** (n + 1) == 0:
        if min(height, width) // 2 ** (n + 1) < MIN_SIDE:
            break
        n += 1
    return n


def decoder_stack(code: int, shape: list[int], base: int, final: str | None) -> tuple[list[Layer], list[int]]:
    """Linear -> Reshape -> ConvTranspose2d (4, stride 2, pad 1) stages -> ConvTranspose2d (3, pad 1) to the
    image's channels; sizes grow layer by layer (W §III-C, DN). `final`: an output activation or None."""
    channels, height, width = shape
    n = growth_plan(height, width)
    h0, w0 = height // 2**n, width // 2**n
    c = base * 2**n
    layers: list[Layer] = [
        layer("Linear", in_features=code, out_features=c * h0 * w0),
        layer("Reshape", shape=[c, h0, w0]),
        layer("ReLU"),
    ]
    sizes = [c]
    for _ in range(n):
        layers += [
            layer("ConvTranspose2d", in_channels=c, out_channels=c // 2, kernel_size=4, stride=2, padding=1),
            layer("ReLU"),
        ]
        c //= 2
        sizes.append(c)
    layers.append(layer("ConvTranspose2d", in_channels=c, out_channels=channels, kernel_size=3, padding=1))
    if final is not None:
        layers.append(layer(final))
    return layers, sizes


def encoder_stack(
    shape: list[int], base: int, outputs: int, slope: float | None
) -> tuple[list[Layer], list[int]]:
    """Conv 4x4 stride 2 stages (DCGAN discriminator / VAE encoder) -> Flatten -> Linear(outputs)."""
    channels, height, width = shape
    stages = min(stages_for(height, width), 4)
    layers: list[Layer] = []
    sizes: list[int] = []
    c, h, w = channels, height, width
    for stage in range(stages):
        out = base * 2**stage
        layers.append(layer("Conv2d", in_channels=c, out_channels=out, kernel_size=4, stride=2, padding=1))
        layers.append(layer("LeakyReLU", negative_slope=slope) if slope is not None else layer("ReLU"))
        c, h, w = out, h // 2, w // 2
        sizes.append(out)
    layers += [layer("Flatten"), layer("Linear", in_features=c * h * w, out_features=outputs)]
    return layers, sizes


DN_CODE = 100  # the code a DN grows into an image; DCGAN's latent size (Radford et al. 2016)


def dn(spec: TaskSpec) -> Draft:
    shape = spec["data"]["input_shape"]
    base = round_width(BASE_CHANNELS * capacity(spec))
    model, sizes = decoder_stack(DN_CODE, shape, base, "Sigmoid")
    model.append(layer("Flatten"))  # targets are [B, outputs] values (see io)
    reasons = [
        reason(
            "size.deep.dn",
            f"A deconvolutional network grows a {DN_CODE}-value specification into a "
            f"{'x'.join(map(str, shape))} "
            f"image: {len(sizes) - 1} upsampling stages, each doubling height and width.",
        )
    ]
    numel = math.prod(shape)
    return Draft(DN.key, "deep", {MODEL: model}, sizes, io_dict([DN_CODE], "value", numel), "mse", reasons)


def conv_code_size(values: int, spec: TaskSpec) -> int:
    """An image code: a sixteenth of the values (widened with capacity), at most 2048, always < values."""
    return max(2, min(values - 1, 2048, round(values * capacity(spec) / 16)))


def conv_ae(spec: TaskSpec) -> Draft:
    """A convolutional auto-encoder: strided convolutions down to a code, transposed convolutions back up."""
    shape = spec["data"]["input_shape"]
    values = math.prod(shape)
    code = conv_code_size(values, spec)
    base = round_width(BASE_CHANNELS * capacity(spec))
    encoder, down = encoder_stack(shape, base, code, None)
    decoder, up = decoder_stack(code, shape, base, None)
    reasons = [
        reason(
            "size.ae.bottleneck",
            f"Convolutions shrink each {'x'.join(map(str, shape))} image ({values:,} values) to a "
            f"{code:,}-value "
            f"code ({values / code:.3g}x smaller); transposed convolutions rebuild the full image from it.",
        ),
        *capacity_reason(spec, "Code and channels"),
    ]
    return Draft(
        AE.key,
        "deep",
        {MODEL: [*encoder, layer("ReLU"), *decoder]},
        [*down, code, *up],
        io_dict(shape, "input", None),
        "mse",
        reasons,
    )
