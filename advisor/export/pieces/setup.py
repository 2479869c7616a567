"""The training set-up every downloaded train.py shares: the Config it is given, the
initialisation, the optimiser, the early-stopping rule, the device and its threads.

A piece of the code a user downloads (advisor/export/training.py assembles train.py
from these files); it must not import the advisor.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class Config:
    """The recommended set-up; CONFIG below gives each value with the rule behind it."""

    family: str  # the network family
    input_shape: tuple[int, ...]  # one example, without the batch dimension
    input_dtype: str  # "float32", or "int64" for token ids
    vocab_size: int | None  # token ids are below it
    target: str  # "class", "class_per_step", "value", "input" (rebuild it), "none"
    output_shape: tuple[int, ...]  # what the (last) network gives per example
    latent_size: int | None  # the generator's or the decoder's input size
    sigmoid_output: bool  # the output network ends in a sigmoid
    inputs: str  # scaling: "standardise", "unit" ([0, 1]), "symmetric" ([-1, 1]), "ids"
    next_step: bool  # without labels, the targets are each sequence's next step
    label_column: str  # of a CSV file
    batch_size: int
    init_scale: float  # weights uniform in +-init_scale ...
    fan_in_cap: bool  # ... and at most 1/sqrt(fan-in) when this is set
    optimizer: str
    learning_rate: float
    momentum: float | None
    betas: tuple[float, float] | None
    weight_decay: float | None  # the optimiser's, where a probe's next step added it
    epochs: int  # over `examples` examples: smaller data gets as many updates
    examples: int  # the data size the set-up was recommended for
    loss: str
    device: str  # "cpu" or "cuda"
    threads: int  # CPU threads (intra-op)
    patience: int  # epochs without progress before training stops ...
    min_gain: float  # ... progress: a validation loss this share lower ...
    min_delta: float  # ... and at least this much lower, or a better score
    max_epochs: int  # a cap, whatever the updates would need
    validation_share: float  # of the examples, to pick the epoch
    test_share: float  # of the examples, held out for the score
    seed: int


NORMALISATION = (
    nn.BatchNorm1d,
    nn.BatchNorm2d,
    nn.BatchNorm3d,
    nn.SyncBatchNorm,
    nn.InstanceNorm1d,
    nn.InstanceNorm2d,
    nn.InstanceNorm3d,
    nn.LayerNorm,
    nn.GroupNorm,
)


def init_small(module: nn.Module, scale: float, fan_in_cap: bool) -> None:
    """Weights (2+ dimensions) uniform in +-scale, at most +-1/sqrt(fan-in) with the
    cap; biases zero; a normalisation layer's scale and a Gaussian decoder's
    log-variance keep their own start."""
    with torch.no_grad():
        for sub in module.modules():
            is_norm = isinstance(sub, NORMALISATION)
            for name, p in sub.named_parameters(recurse=False):
                if p.dim() >= 2:
                    bound = scale
                    if fan_in_cap:
                        fan_in = p.shape[1] * math.prod(p.shape[2:])
                        bound = min(scale, 1.0 / math.sqrt(max(1, fan_in)))
                    p.uniform_(-bound, bound)
                elif not (is_norm and name == "weight") and name != "log_variance":
                    p.zero_()


OPTIMIZERS: dict[str, Callable[..., torch.optim.Optimizer]] = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "rmsprop": torch.optim.RMSprop,
    "adagrad": torch.optim.Adagrad,
    "adadelta": torch.optim.Adadelta,
}


def make_optimizer(
    params: Iterable[nn.Parameter], config: Config
) -> torch.optim.Optimizer:
    options: dict[str, float | tuple[float, float]] = {"lr": config.learning_rate}
    if config.momentum is not None:
        options["momentum"] = config.momentum
    if config.betas is not None:
        options["betas"] = config.betas
    if config.weight_decay is not None:
        options["weight_decay"] = config.weight_decay
    return OPTIMIZERS[config.optimizer](params, **options)


def pick_device(asked: str | None, config: Config) -> torch.device:
    """The device asked for, else the recommended one; CUDA only where there is one."""
    name = asked or config.device
    if name.startswith("cuda") and not torch.cuda.is_available():
        print(f"{name} is not available here: training on the CPU")
        name = "cpu"
    return torch.device(name)


def set_threads(device: torch.device, threads: int, allocator: dict[str, str]) -> None:
    """CPU threads for the operators, denormal floats flushed to zero; on a CPU, say
    whether the recommended allocator set-up is in place (glibc reads it at start-up:
    it cannot be set from here)."""
    if device.type != "cpu":
        return
    # as the advisor timed it: a long recurrent network's gradients decay into
    # denormals, which many x86 CPUs compute many times slower (4-16x measured); set
    # before the first operator, as each intra-op thread keeps the mode it starts with
    torch.set_flush_denormal(True)
    torch.set_num_threads(threads)
    missing = {k: v for k, v in allocator.items() if os.environ.get(k) != v}
    if missing:
        settings = " ".join(f"{k}={v}" for k, v in allocator.items())
        print(f"Faster on this CPU: start as `{settings} python train.py ...`")
