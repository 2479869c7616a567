"""Adversarial training (a GAN), as pytorch/examples' DCGAN: the discriminator learns
to tell real examples (1) from generated ones (0), then the generator learns to make
the discriminator answer 1 on its own.

A GAN has no held-out score to stop on: it trains every recommended epoch.

A piece of the code a user downloads (advisor/export/training.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor.export.pieces.data import Data
from advisor.export.pieces.fit import Batch, Evaluate, Step
from advisor.export.pieces.setup import Config, make_optimizer


def noise(config: Config, batch: int, device: torch.device) -> torch.Tensor:
    assert config.latent_size is not None
    return torch.randn(batch, config.latent_size, device=device)


def check_shapes(
    nets: dict[str, nn.Module], config: Config, device: torch.device
) -> None:
    generator, discriminator = nets["generator"].eval(), nets["discriminator"].eval()
    with torch.no_grad():
        fake = generator(noise(config, 2, device))
        real = torch.rand(2, *config.input_shape, device=device)
        verdicts = discriminator(real)
    generator.train(), discriminator.train()
    assert tuple(fake.shape[1:]) == config.input_shape, fake.shape
    assert tuple(verdicts.shape[1:]) == config.output_shape, verdicts.shape


def update(
    generator: nn.Module,
    discriminator: nn.Module,
    opt_g: torch.optim.Optimizer,
    opt_d: torch.optim.Optimizer,
    real: torch.Tensor,
    z: torch.Tensor,
) -> torch.Tensor:
    """One step of both networks on a batch of real examples and one of noise `z`:
    the discriminator's, then the generator's through it. Returns the sum of losses."""
    fake = generator(z).reshape(real.shape)
    opt_d.zero_grad(set_to_none=True)
    d_real = discriminator(real)
    d_fake = discriminator(fake.detach())
    loss_d = F.binary_cross_entropy_with_logits(
        d_real, torch.ones_like(d_real)
    ) + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad(set_to_none=True)
    d_on_fake = discriminator(fake)
    loss_g = F.binary_cross_entropy_with_logits(d_on_fake, torch.ones_like(d_on_fake))
    loss_g.backward()
    opt_g.step()
    return loss_d + loss_g


def make_step(nets: dict[str, nn.Module], config: Config) -> Step:
    generator, discriminator = nets["generator"], nets["discriminator"]
    opt_g = make_optimizer(generator.parameters(), config)
    opt_d = make_optimizer(discriminator.parameters(), config)

    def step(batch: Batch) -> torch.Tensor:
        real = batch[0]
        z = noise(config, len(real), real.device)
        return update(generator, discriminator, opt_g, opt_d, real, z)

    return step


def make_evaluate(
    nets: dict[str, nn.Module], data: Data, config: Config
) -> Evaluate | None:
    return None


def synthetic_batch(config: Config, batch: int, device: torch.device) -> Batch:
    return (torch.rand(batch, *config.input_shape, device=device),)
