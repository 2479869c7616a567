"""Forward-pass FLOPs of a built network, per example, by the contract's convention.

One multiply-add is 2 FLOPs; only the matrix products count (Linear, Conv*, ConvTranspose*, LSTM/RNN/GRU,
RBM), not biases, activations or normalisation, which matches torch.utils.flop_counter.FlopCounterMode where
it applies. The counter runs a real forward pass with hooks, so shapes after pooling, padding and strides are
the real ones.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from advisor.calibration.layers import RBM

_GATES = {nn.LSTM: 4, nn.GRU: 3, nn.RNN: 1}


def _module_flops(module: nn.Module, inputs: tuple[Any, ...], output: Any) -> int:
    if isinstance(module, nn.Linear):
        return 2 * module.in_features * int(output.numel())
    if isinstance(module, nn.modules.conv._ConvNd):
        x = inputs[0]
        kernel = math.prod(module.kernel_size)
        if isinstance(module, nn.modules.conv._ConvTransposeNd):
            # Each input element is multiplied into a kernel window of every output channel of its group.
            return 2 * int(x.numel()) * (module.out_channels // module.groups) * kernel
        return 2 * int(output.numel()) * (module.in_channels // module.groups) * kernel
    if isinstance(module, nn.RNNBase):
        gates = next(g for cls, g in _GATES.items() if isinstance(module, cls))
        x = inputs[0]  # batch_first: [B, T, F]
        batch, steps = (x.shape[0], x.shape[1]) if module.batch_first else (x.shape[1], x.shape[0])
        directions = 2 if module.bidirectional else 1
        hidden = module.hidden_size
        total = 0
        for layer in range(module.num_layers):
            width = module.input_size if layer == 0 else hidden * directions
            total += 2 * gates * hidden * (width + hidden) * directions
        return int(total * steps * batch)
    if isinstance(module, RBM):
        return 2 * module.visible * module.hidden * int(inputs[0].shape[0])
    return 0


def probe(net: nn.Module, example_input: torch.Tensor) -> tuple[int, torch.Size]:
    """FLOPs of one forward pass per example, and the output's per-example shape.

    `example_input` is a small batch [B, ...] of valid input; it runs in eval mode, without gradients.
    """
    counted: list[int] = []
    counted_types = (nn.Linear, nn.modules.conv._ConvNd, nn.RNNBase, RBM)

    def hook(module: nn.Module, inputs: tuple[Any, ...], output: Any) -> None:
        counted.append(_module_flops(module, inputs, output))

    handles = [m.register_forward_hook(hook) for m in net.modules() if isinstance(m, counted_types)]
    was_training = net.training
    try:
        net.eval()  # a tiny batch's statistics do not matter here; eval also spares BatchNorm's B=1 error
        with torch.no_grad():
            output = net(example_input)
    finally:
        net.train(was_training)
        for h in handles:
            h.remove()
    return sum(counted) // int(example_input.shape[0]), output.shape[1:]
