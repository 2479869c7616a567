"""The tests' own torch builder for engine layer lists (docs/CANDIDATE.md), with the engine's added kinds: its
own modules where a count could show the advisor's wrong (the RBM's parameters, the causal convolution, the
branches), the download's pieces for the views and wrappers (nothing to get wrong but a parameter vector)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from advisor.export.pieces.layers import Gaussian, LastStep, PoolOverTime, Reshape, SequenceOutput


class RBM(nn.Module):
    """visible*hidden + visible + hidden parameters; forward gives hidden probabilities."""

    def __init__(self, visible: int, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(hidden, visible))
        self.visible_bias = nn.Parameter(torch.zeros(visible))
        self.hidden_bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(nn.functional.linear(x, self.weight, self.hidden_bias))


class CausalConv1d(nn.Module):
    """[B, steps, in] -> [B, steps, out]: left padding of (kernel_size - 1) * dilation, then torch's Conv1d
    on channels first (the advisor's builds it otherwise: this one checks it)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, dilation: int = 1, bias: bool = True
    ) -> None:
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, dilation=dilation, bias=bias)
        self.left = (kernel_size - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        padded = nn.functional.pad(x.transpose(1, 2), (self.left, 0))
        out: torch.Tensor = self.conv(padded).transpose(1, 2)
        return out


class Residual(nn.Module):
    """body(x) + shortcut(x); an empty shortcut is the identity (the ReLU after it is its own layer)."""

    def __init__(self, body: list[dict[str, Any]], shortcut: list[dict[str, Any]]) -> None:
        super().__init__()
        self.body = build(body)
        self.shortcut = build(shortcut)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.body(x) + self.shortcut(x)
        return out


class Concat(nn.Module):
    """Branches side by side, concatenated along channels (dim 1)."""

    def __init__(self, branches: list[list[dict[str, Any]]]) -> None:
        super().__init__()
        self.branches = nn.ModuleList(build(branch) for branch in branches)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([branch(x) for branch in self.branches], dim=1)


EXTRA = {
    "RBM": RBM,
    "Reshape": Reshape,
    "LastStep": LastStep,
    "PoolOverTime": PoolOverTime,
    "CausalConv1d": CausalConv1d,
    "Gaussian": Gaussian,
    "Residual": Residual,
    "Concat": Concat,
}


def build(layers: list[dict[str, Any]]) -> nn.Sequential:
    modules: list[nn.Module] = []
    for item in layers:
        kind, args = item["kind"], item["args"]
        if kind in EXTRA:
            modules.append(EXTRA[kind](**args))
        elif kind in ("LSTM", "RNN", "GRU"):
            modules.append(SequenceOutput(getattr(nn, kind)(**args)))
        else:
            modules.append(getattr(nn, kind)(**args))
    return nn.Sequential(*modules)
