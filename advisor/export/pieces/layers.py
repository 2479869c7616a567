"""The layer kinds a candidate may name beyond torch.nn, as model.py writes them out.

Each class is copied into a downloaded model.py whose network uses it (the layer-kind
table of advisor/export/network.py says which). They make the same parameters, in the
same order, as advisor/calibration/layers.py: a model.py network has exactly the
candidate's parameter count and, from the same seed, the same weights.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn


def seq(*layers: tuple[str, nn.Module]) -> nn.Sequential:
    """A network of named layers, run in order."""
    return nn.Sequential(OrderedDict(layers))


class Reshape(nn.Module):
    """Reshape each example to `shape`; the batch dimension is kept."""

    def __init__(self, shape: Sequence[int]) -> None:
        super().__init__()
        self.shape = tuple(shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], *self.shape)


class Gaussian(nn.Module):
    """A Gaussian decoder's output (Kingma & Welling 2014, appendix C.2): passes the
    mean through and holds one learned log-variance per value, started at -2
    (variance 0.14, under a standardised value's 1: started at the data's own
    variance, the decoder that ignores the code is the best from the first step and
    the VAE stays there); the VAE's Gaussian ELBO reads it for the likelihood, and
    sampling for the samples' noise."""

    def __init__(self, features: int) -> None:
        super().__init__()
        # the start: bench/results/advice_amd-epyc-2c_generation-prior/README.md
        self.log_variance = nn.Parameter(torch.full((features,), -2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class LastStep(nn.Module):
    """Keep a batch-first sequence's last time step: [B, T, H] -> [B, H]."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, -1, :]


class PoolOverTime(nn.Module):
    """A batch-first sequence read whole, [B, T, H] -> [B, len(pools) x H]: "last",
    its last time step, and "max", each feature's largest value over the steps
    (max-over-time pooling, Collobert et al. 2011, Kim 2014), joined in the order
    given (concat pooling, Howard & Ruder 2018). The last step says where the
    sequence ended up, the maximum what was found anywhere in it."""

    def __init__(self, pools: Sequence[str]) -> None:
        super().__init__()
        if not pools or any(p not in ("last", "max") for p in pools):
            raise ValueError(f"pools: 'last' and/or 'max', got {list(pools)}")
        self.pools = list(pools)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # max (not amax): its backward keeps the indices only, [B, H], not the input
        parts = [
            x[:, -1, :] if p == "last" else x.max(dim=1).values for p in self.pools
        ]
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)


class CausalConv1d(nn.Conv1d):
    """A causal, dilated convolution over time steps, a temporal convolutional
    network's building block (Bai, Kolter & Koltun 2018, sections 3.1-3.2):
    [B, T, in_channels] -> [B, T, out_channels], each step seeing itself and the
    steps before it only. The sequence is padded on the left by
    (kernel_size - 1) * dilation, so the output keeps the input's length.

    Steps first, as the recurrent layers (batch_first) have them. It runs as a 2-D
    convolution in channels-last layout on a view of the padded sequence, so the
    output comes out steps first and contiguous, with no copy."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        dilation: int = 1,
        bias: bool = True,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, dilation=dilation, bias=bias
        )
        self.left = (kernel_size - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, T, in] -> [B, T, out]
        if self.left:
            x = F.pad(x, (0, 0, self.left, 0))  # [B, left + T, in]
        kernel = self.weight.unsqueeze(2)  # [out, in, 1, k]
        x = x.transpose(1, 2).unsqueeze(2)  # [B, in, 1, left + T], channels last
        out = F.conv2d(x, kernel, self.bias, dilation=(1, self.dilation[0]))
        return out.squeeze(2).transpose(1, 2)  # [B, out, 1, T] -> [B, T, out]


class SequenceOutput(nn.Module):
    """A recurrent layer (LSTM, GRU, RNN) that passes on its output sequence only, not
    its final hidden state: [B, T, F] -> [B, T, H]."""

    def __init__(self, rnn: nn.Module) -> None:
        super().__init__()
        self.rnn = rnn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.rnn(x)[0]
        return out


class RBM(nn.Module):
    """A restricted Boltzmann machine: weight [hidden, visible] and both bias vectors.

    Its forward pass is the upward pass, the hidden units' probabilities; `down` is
    the way back. Contrastive divergence (train.py's cd1) sets its gradients."""

    def __init__(self, visible: int, hidden: int) -> None:
        super().__init__()
        self.visible = visible
        self.hidden = hidden
        self.weight = nn.Parameter(torch.empty(hidden, visible))
        self.visible_bias = nn.Parameter(torch.zeros(visible))
        self.hidden_bias = nn.Parameter(torch.zeros(hidden))
        nn.init.uniform_(self.weight, -0.01, 0.01)

    def forward(self, v: torch.Tensor) -> torch.Tensor:  # [B, visible] -> [B, hidden]
        return torch.sigmoid(F.linear(v, self.weight, self.hidden_bias))

    def down(self, h: torch.Tensor) -> torch.Tensor:  # [B, hidden] -> [B, visible]
        return torch.sigmoid(F.linear(h, self.weight.t(), self.visible_bias))


class Residual(nn.Module):
    """y = body(x) + shortcut(x); without a shortcut, the identity (ResNet's blocks)."""

    def __init__(self, body: nn.Module, shortcut: nn.Module | None = None) -> None:
        super().__init__()
        self.body = body
        self.shortcut = shortcut if shortcut is not None else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.body(x) + self.shortcut(x)
        return out


class Concat(nn.Module):
    """Run branches on the same input and join their outputs along `dim`, the channels
    by default (GoogLeNet's inception blocks)."""

    def __init__(self, *branches: nn.Module, dim: int = 1) -> None:
        super().__init__()
        self.branches = nn.ModuleList(branches)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([branch(x) for branch in self.branches], dim=self.dim)
