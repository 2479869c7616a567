"""Contrastive divergence (restricted Boltzmann machines): one Gibbs step per update
(CD-1, Hinton 2002) on every RBM of the model, each on the one below's hidden units.

A piece of the code a user downloads (advisor/export/training.py).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from advisor.export.pieces.cd import cd1
from advisor.export.pieces.data import Data
from advisor.export.pieces.fit import Batch, Evaluate, Step, outputs, score
from advisor.export.pieces.layers import RBM
from advisor.export.pieces.setup import Config, make_optimizer


def rbms(net: nn.Module) -> list[RBM]:
    return [m for m in net.modules() if isinstance(m, RBM)]


def random_visible(config: Config, batch: int, device: torch.device) -> torch.Tensor:
    """Visible units in [0, 1): an RBM sees each example as one vector."""
    return torch.rand(batch, math.prod(config.input_shape), device=device)


def check_shapes(
    nets: dict[str, nn.Module], config: Config, device: torch.device
) -> None:
    model = nets["model"].eval()
    with torch.no_grad():
        model(random_visible(config, 2, device))
    model.train()


def make_step(nets: dict[str, nn.Module], config: Config) -> Step:
    model = nets["model"]
    stack = rbms(model)
    optimizer = make_optimizer(model.parameters(), config)

    def step(batch: Batch) -> torch.Tensor:
        v = x = batch[0].reshape(len(batch[0]), -1)
        optimizer.zero_grad(set_to_none=True)
        for rbm in stack:
            x = cd1(rbm, x)
        optimizer.step()
        with (
            torch.no_grad()
        ):  # what to watch: how well the first RBM rebuilds the batch
            return F.mse_loss(stack[0].down(stack[0](v)), v)

    return step


class Rebuild(nn.Module):
    """Up through every RBM and back down: how well the model rebuilds its input."""

    def __init__(self, stack: list[RBM]) -> None:
        super().__init__()
        self.stack = stack

    def forward(self, v: torch.Tensor) -> torch.Tensor:
        h = v.reshape(len(v), -1)
        for rbm in self.stack:
            h = rbm(h)
        for rbm in reversed(self.stack):
            h = rbm.down(h)
        return h


def make_evaluate(nets: dict[str, nn.Module], data: Data, config: Config) -> Evaluate:
    rebuild = Rebuild(rbms(nets["model"]))

    def evaluate(part: str) -> tuple[float, float]:
        out, truth = outputs(rebuild, data.x[part]), data.truth[part]
        loss = F.mse_loss(out, torch.from_numpy(truth).reshape(out.shape))
        return score(truth, out.numpy(), classes=False), float(loss)

    return evaluate


def synthetic_batch(config: Config, batch: int, device: torch.device) -> Batch:
    return (random_visible(config, batch, device),)
