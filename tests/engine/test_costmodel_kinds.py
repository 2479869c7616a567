"""The profiled time model's reading of particular layer kinds and steps: max-pools, a VAE's own ops."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from advisor.engine.costmodel import (
    GAUSSIAN_LIKELIHOOD_OPS,
    LOSS_PASSES,
    _layer_seconds,
    factor_of,
    step_cost,
)
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
    out, compute, other = _layer_seconds(pool, shape, batch, rates)  # type: ignore[arg-type]
    assert out == KINDS["MaxPool2d"].shape(args, shape)[0] and compute == 0.0
    assert other == pytest.approx(interpolate(rates["pool"], batch * math.prod(shape)))
    _, _, before = _layer_seconds(pool, shape, batch, older)  # type: ignore[arg-type]
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
