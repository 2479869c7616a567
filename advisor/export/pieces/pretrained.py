"""A deep belief network: its stacked RBMs pre-trained by contrastive divergence (CD-1
on every RBM, each on the one below's hidden units), then the stack and its classifier
fine-tuned by backpropagation; each update does both, on the same mini-batch.

A piece of the code a user downloads (advisor/export/training.py).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from advisor.export.pieces.cd import cd1
from advisor.export.pieces.contrastive import random_visible, rbms
from advisor.export.pieces.data import Data
from advisor.export.pieces.fit import Batch, Evaluate, Step, supervised
from advisor.export.pieces.setup import Config, make_optimizer


def check_shapes(
    nets: dict[str, nn.Module], config: Config, device: torch.device
) -> None:
    stack, classifier = nets["rbm"].eval(), nets["classifier"].eval()
    with torch.no_grad():
        out = classifier(stack(random_visible(config, 2, device)))
    stack.train(), classifier.train()
    assert tuple(out.shape[1:]) == config.output_shape, out.shape


def make_step(nets: dict[str, nn.Module], config: Config) -> Step:
    stack, classifier = nets["rbm"], nets["classifier"]
    layers = rbms(stack)
    pretrain = make_optimizer(stack.parameters(), config)
    finetune = make_optimizer([*stack.parameters(), *classifier.parameters()], config)

    def step(batch: Batch) -> torch.Tensor:
        v, y = batch
        v = v.reshape(len(v), -1)
        pretrain.zero_grad(set_to_none=True)
        h = v
        for rbm in layers:  # greedy: each RBM on the one below's hidden units
            h = cd1(rbm, h)
        pretrain.step()
        finetune.zero_grad(set_to_none=True)
        loss = F.cross_entropy(classifier(stack(v)), y)
        loss.backward()
        finetune.step()
        return loss

    return step


def make_evaluate(nets: dict[str, nn.Module], data: Data, config: Config) -> Evaluate:
    return supervised(nn.Sequential(nets["rbm"], nets["classifier"]), data, config)


def synthetic_batch(config: Config, batch: int, device: torch.device) -> Batch:
    v = random_visible(config, batch, device)
    return v, torch.randint(config.output_shape[-1], (batch,), device=device)
