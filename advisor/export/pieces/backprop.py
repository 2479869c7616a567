"""Backpropagation (feed-forward, auto-encoder, convolutional, deconvolutional and
recurrent networks): forward, loss, backward, update.

A piece of the code a user downloads (advisor/export/training.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor.export.pieces.data import Data
from advisor.export.pieces.fit import Batch, Evaluate, Step, supervised
from advisor.export.pieces.setup import Config, make_optimizer


def random_inputs(config: Config, batch: int, device: torch.device) -> torch.Tensor:
    """Inputs of the network's shape: token ids below the vocabulary, else in [0, 1)."""
    size = (batch, *config.input_shape)
    if config.vocab_size:
        return torch.randint(config.vocab_size, size, device=device)
    return torch.rand(size, device=device)


def check_shapes(
    nets: dict[str, nn.Module], config: Config, device: torch.device
) -> None:
    """One forward pass on two random examples: the layers fit together."""
    model = nets["model"].eval()
    with torch.no_grad():
        out = model(random_inputs(config, 2, device))
    model.train()
    assert tuple(out.shape[1:]) == config.output_shape, out.shape


def reconstruction_loss(
    out: torch.Tensor, target: torch.Tensor, config: Config
) -> torch.Tensor:
    target = target.reshape(out.shape).to(out.dtype)
    if config.loss == "bce":
        if config.sigmoid_output:
            return F.binary_cross_entropy(out, target)
        return F.binary_cross_entropy_with_logits(out, target)
    return F.mse_loss(out, target)


def make_step(nets: dict[str, nn.Module], config: Config) -> Step:
    model = nets["model"]
    optimizer = make_optimizer(model.parameters(), config)

    def step(batch: Batch) -> torch.Tensor:
        x = batch[0]
        optimizer.zero_grad(set_to_none=True)
        out = model(x)
        if config.target == "input":  # an auto-encoder rebuilds its input
            loss = reconstruction_loss(out, x, config)
        elif config.loss == "cross_entropy":  # one class, or one per time step
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), batch[1].reshape(-1))
        else:
            loss = reconstruction_loss(out, batch[1], config)
        loss.backward()
        optimizer.step()
        return loss

    return step


def make_evaluate(nets: dict[str, nn.Module], data: Data, config: Config) -> Evaluate:
    return supervised(nets["model"], data, config)


def synthetic_batch(config: Config, batch: int, device: torch.device) -> Batch:
    x = random_inputs(config, batch, device)
    if config.target == "input":
        return (x,)
    if config.loss == "cross_entropy":
        steps = config.input_shape[:1] if config.target == "class_per_step" else ()
        return x, torch.randint(config.output_shape[-1], (batch, *steps), device=device)
    return x, torch.randn(batch, *config.output_shape, device=device)
