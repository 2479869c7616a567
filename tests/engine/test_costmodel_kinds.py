"""The profiled time model's reading of particular layer kinds and steps: convolutions' channel blocks,
transposed convolutions, max-pools, a VAE's own ops."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from advisor.engine.costmodel import GAUSSIAN_LIKELIHOOD_OPS, LOSS_PASSES, factor_of, step_cost
from advisor.engine.layercost import channel_padding, layer_seconds
from advisor.engine.layers import KINDS
from advisor.engine.profile import interpolate
from tests.engine.profiles import synthetic_profile

PROFILE = synthetic_profile()


@pytest.mark.parametrize(
    ("args", "shape", "batch"),
    [
        ({"kernel_size": 2}, (32, 28, 28), 64),
        ({"kernel_size": 2, "stride": 2}, (8, 9, 9), 16),  # an odd side: the last row and column dropped
        ({"kernel_size": 3, "stride": 2}, (64, 28, 28), 32),  # overlapping windows: still its input's values
    ],
)
def test_a_max_pool_is_read_off_its_own_curve_at_its_input_or_an_older_profiles_activation_passes(
    args: dict[str, Any], shape: tuple[int, int, int], batch: int
) -> None:
    """Version 11 profiles time a max-pool (its forward took 5-7x two activation passes on a CPU)."""
    pool = {"kind": "MaxPool2d", "args": args}
    rates = copy.deepcopy(PROFILE["threads"]["1"])
    older = copy.deepcopy(rates)
    rates["pool"] = [[w, 6 * s] for w, s in rates["elementwise"]]
    out, compute, other = layer_seconds(pool, shape, batch, rates)  # type: ignore[arg-type]
    assert out == KINDS["MaxPool2d"].shape(args, shape)[0] and compute == 0.0
    assert other == pytest.approx(interpolate(rates["pool"], batch * math.prod(shape)))
    _, _, before = layer_seconds(pool, shape, batch, older)  # type: ignore[arg-type]
    touched = batch * max(math.prod(shape), math.prod(out))
    assert before == pytest.approx(KINDS["MaxPool2d"].touches * interpolate(older["elementwise"], touched))
    assert other > 2.5 * before  # the own curve, six passes here, is what is read


def _vae(loss: str) -> dict[str, Any]:
    """A Gaussian decoder's VAE; its loss the ELBO with the decoder's likelihood or a squared error."""
    encoder = [
        {"kind": "Linear", "args": {"in_features": 20, "out_features": 64}},
        {"kind": "ReLU", "args": {}},
        {"kind": "Linear", "args": {"in_features": 64, "out_features": 8}},
    ]
    decoder = [
        {"kind": "Linear", "args": {"in_features": 4, "out_features": 64}},
        {"kind": "ReLU", "args": {}},
        {"kind": "Linear", "args": {"in_features": 64, "out_features": 20}},
        {"kind": "Gaussian", "args": {"features": 20}},
    ]
    return {
        "family": "vae",
        "published": None,
        "networks": {"encoder": encoder, "decoder": decoder},
        "io": {"input_shape": [20], "target": "input", "outputs": 20, "latent_size": 4},
        "training": {"optimizer": "adam", "loss": loss},
    }


@pytest.mark.parametrize("batch", [16, 256])
def test_a_gaussian_decoders_likelihood_costs_its_ops_over_the_output_where_mse_costs_its_passes(
    batch: int,
) -> None:
    """A Gaussian decoder's negative log-likelihood is nine element-wise ops over its output, each with its
    backward (calibration.steps._vae_step); a mean-squared error is the loss's passes, its launch in the
    step's fixed cost."""
    rates = PROFILE["threads"]["1"]
    gaussian = step_cost(_vae("elbo_gaussian"), batch_size=batch, threads=1, profile=PROFILE)
    mse = step_cost(_vae("mse"), batch_size=batch, threads=1, profile=PROFILE)
    values = batch * 20
    likelihood = GAUSSIAN_LIKELIHOOD_OPS * interpolate(rates["elementwise"], values)
    squared = LOSS_PASSES["mse"] * interpolate(rates["elementwise"], values, launch=False)
    expected = factor_of(PROFILE) * (likelihood - squared)
    assert gaussian.other - mse.other == pytest.approx(expected, rel=1e-6)
    assert gaussian.compute == pytest.approx(mse.compute)


@pytest.mark.parametrize(
    ("in_channels", "out_channels", "transposed", "input_grad", "padding"),
    [
        (16, 32, False, True, 1.0),  # whole blocks: as counted
        (32, 1, False, True, (16 + 16 + 1) / 3),  # forward and weights run blocks of the output channels
        (1, 32, False, True, (1 + 1 + 16) / 3),  # the input's gradient runs blocks of the input channels
        (1, 32, False, False, 1.0),  # a first layer has no input gradient
        (32, 1, True, True, (1 + 1 + 16) / 3),  # a transposed convolution the other way round
        (3, 32, True, True, (16 / 3 + 16 / 3 + 1) / 3),
        (24, 8, False, True, (2 + 2 + 32 / 24) / 3),
    ],
)
def test_a_convolutions_work_counts_the_channel_blocks_its_kernels_run(
    in_channels: int, out_channels: int, transposed: bool, input_grad: bool, padding: float
) -> None:
    args = {"in_channels": in_channels, "out_channels": out_channels}
    assert channel_padding(args, 16, transposed=transposed, input_grad=input_grad) == pytest.approx(padding)
    assert channel_padding(args, 1, transposed=transposed, input_grad=input_grad) == 1.0
    assert channel_padding({**args, "groups": 2}, 16, transposed=transposed) == 1.0


def test_a_transposed_convolution_is_read_off_its_own_curve_at_its_padded_work() -> None:
    decoder = [
        {"kind": "Linear", "args": {"in_features": 8, "out_features": 32 * 7 * 7}},
        {"kind": "Reshape", "args": {"shape": [32, 7, 7]}},
        {
            "kind": "ConvTranspose2d",
            "args": {"in_channels": 32, "out_channels": 1, "kernel_size": 4, "stride": 2, "padding": 1},
        },
    ]
    candidate = {
        "family": "ffn",
        "published": None,
        "networks": {"model": decoder},
        "io": {"input_shape": [8], "target": "class", "outputs": 784},
        "training": {"optimizer": "sgd"},
    }

    def seconds(profile: Any) -> float:
        return step_cost(candidate, batch_size=32, threads=1, profile=profile).compute

    older = copy.deepcopy(PROFILE)  # version 9: FLOPs alone, off the conv curve
    padded = copy.deepcopy(PROFILE)
    own = copy.deepcopy(PROFILE)
    for rates in padded["threads"].values():
        rates["channel_block"] = 16
    for rates in own["threads"].values():
        rates["channel_block"] = 16
        rates["conv_transpose"] = [[w, 2 * s] for w, s in rates["conv"]]
    assert seconds(older) < seconds(padded) < seconds(own)
