"""The optimiser a candidate's `training` states is the one torch builds: the rate and, where a rule sets
them, Adam's betas (DCGAN's beta1 0.5 for image GANs; Kingma & Ba's defaults for fully connected GANs)."""

from __future__ import annotations

import pytest
import torch

from advisor.calibration.steps import _optimizer
from advisor.engine import recommend
from tests.engine.specs import spec


@pytest.mark.parametrize(
    ("input_shape", "rate", "betas"),
    [([1, 28, 28], 2e-4, (0.5, 0.999)), ([2], 1e-3, (0.9, 0.999))],
    ids=["image-gan", "vector-gan"],
)
def test_it_builds_the_gan_optimiser_the_rules_state(
    input_shape: list[int], rate: float, betas: tuple[float, float]
) -> None:
    # an image's first generator is its GAN; vectors get a VAE first and the GAN second
    gan = next(c for c in recommend(spec("generation", input_shape))["candidates"] if c["family"] == "gan")
    opt = _optimizer(torch.nn.Linear(2, 1).parameters(), gan["training"])
    group = opt.param_groups[0]
    assert isinstance(opt, torch.optim.Adam)
    assert (group["lr"], tuple(group["betas"])) == (rate, betas)
