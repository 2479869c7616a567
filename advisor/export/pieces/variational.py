"""A variational auto-encoder: the encoder gives each example's mean and log-variance,
a sample of that code (reparameterised, Kingma & Welling 2014) goes through the
decoder, and the loss is the negative evidence lower bound (ELBO): the rebuild's error
plus the code's KL divergence from a standard normal.

A piece of the code a user downloads (advisor/export/training.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor.export.pieces.data import Data
from advisor.export.pieces.fit import Batch, Evaluate, Step, outputs, score
from advisor.export.pieces.setup import Config, make_optimizer


def check_shapes(
    nets: dict[str, nn.Module], config: Config, device: torch.device
) -> None:
    assert config.latent_size is not None
    encoder, decoder = nets["encoder"].eval(), nets["decoder"].eval()
    with torch.no_grad():
        code = encoder(torch.rand(2, *config.input_shape, device=device))
        rebuilt = decoder(torch.randn(2, config.latent_size, device=device))
    encoder.train(), decoder.train()
    assert code.shape[1] == 2 * config.latent_size, code.shape
    assert tuple(rebuilt.shape[1:]) == config.output_shape, rebuilt.shape


def elbo_loss(
    x: torch.Tensor, encoder: nn.Module, decoder: nn.Module, config: Config
) -> torch.Tensor:
    mean, log_var = encoder(x).chunk(2, dim=1)  # [B, L] each
    z = mean + torch.randn_like(mean) * torch.exp(0.5 * log_var)  # reparameterised
    kl = -0.5 * torch.mean(torch.sum(1 + log_var - mean.pow(2) - log_var.exp(), dim=1))
    out = decoder(z)
    target = x.reshape(out.shape)
    # a Gaussian decoder: a learned variance per value
    if config.loss == "elbo_gaussian":
        noise = next(
            p for n, p in decoder.named_parameters() if n.endswith("log_variance")
        )
        error = (out.reshape(len(x), -1) - x.reshape(len(x), -1)).pow(2)
        # the Gaussian negative log-likelihood per example, summed over values (Kingma &
        # Welling 2014, appendix C.2)
        nll = 0.5 * torch.mean(torch.sum(error * torch.exp(-noise) + noise, dim=1))
        return nll + kl
    if config.sigmoid_output:  # the decoder gives probabilities: binary cross-entropy
        return F.binary_cross_entropy(out, target) + kl
    return F.mse_loss(out, target) + kl


def make_step(nets: dict[str, nn.Module], config: Config) -> Step:
    encoder, decoder = nets["encoder"], nets["decoder"]
    optimizer = make_optimizer([*encoder.parameters(), *decoder.parameters()], config)

    def step(batch: Batch) -> torch.Tensor:
        optimizer.zero_grad(set_to_none=True)
        loss = elbo_loss(batch[0], encoder, decoder, config)
        loss.backward()
        optimizer.step()
        return loss

    return step


class Rebuild(nn.Module):
    """Encoder, then decoder from the code's mean: how well the VAE rebuilds."""

    def __init__(self, encoder: nn.Module, decoder: nn.Module) -> None:
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = self.encoder(x).chunk(2, dim=1)[0]
        out: torch.Tensor = self.decoder(mean)
        return out


def make_evaluate(nets: dict[str, nn.Module], data: Data, config: Config) -> Evaluate:
    rebuild = Rebuild(nets["encoder"], nets["decoder"])

    def evaluate(part: str) -> tuple[float, float]:
        out, truth = outputs(rebuild, data.x[part]), data.truth[part]
        loss = F.mse_loss(out.reshape(len(out), -1), torch.from_numpy(truth))
        return score(truth, out.numpy(), classes=False), float(loss)

    return evaluate


def synthetic_batch(config: Config, batch: int, device: torch.device) -> Batch:
    return (torch.rand(batch, *config.input_shape, device=device),)
