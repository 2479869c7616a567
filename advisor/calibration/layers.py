"""Build torch modules from a candidate's layer lists (the format of docs/CANDIDATE.md).

A layer is `{"kind": K, "args": A}`; K names a `torch.nn` class built as `getattr(torch.nn, K)(**A)`, except
the few kinds the advisor adds (`RBM`, `Reshape`, `LastStep`, `CausalConv1d`, `Gaussian`, and container
kinds the engine may add), which live in CUSTOM_KINDS below.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

Layer = Mapping[str, Any]

RECURRENT_KINDS = frozenset({"LSTM", "RNN", "GRU"})


class RBM(nn.Module):
    """A restricted Boltzmann machine: weight [hidden, visible] (as nn.Linear and the engine lay it out) plus
    both bias vectors.

    Its forward pass is the upward (recognition) pass, hidden probabilities sigmoid(v W^T + b_h); that is how
    a DBN's fine-tuning and a stack of RBMs use it. Contrastive divergence lives in `steps.cd1_gradients`.
    """

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


class Reshape(nn.Module):
    """Reshape each example to `shape` (the batch dimension is kept)."""

    def __init__(self, shape: Sequence[int]) -> None:
        super().__init__()
        self.shape = tuple(int(s) for s in shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], *self.shape)


class Gaussian(nn.Module):
    """A Gaussian decoder's output (Kingma & Welling 2014, App. C.2): passes the mean through and holds one
    learned log-variance per value, started at 0 (variance 1); the VAE's `elbo_gaussian` step reads it for
    the likelihood and `advisor.probe.learning.generation.generate` for the samples' noise."""

    def __init__(self, features: int) -> None:
        super().__init__()
        self.log_variance = nn.Parameter(torch.zeros(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class LastStep(nn.Module):
    """Keep a batch-first sequence's last time step: [B, T, H] -> [B, H]."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, -1, :]


class CausalConv1d(nn.Conv1d):
    """A causal, dilated convolution over time steps, a temporal convolutional network's building block
    (Bai, Kolter & Koltun 2018, §3.1-3.2): [B, steps, in_channels] -> [B, steps, out_channels], each step
    seeing itself and the steps before it only. The sequence is padded on the left by
    (kernel_size - 1) * dilation, so the output keeps the input's length.

    Steps first, as the recurrent layers (batch_first) and LastStep have them. The convolution runs as a 2-D
    one in channels-last layout on a view of the padded sequence, so the output comes out steps first and
    contiguous with no copy (Conv1d on the transposed view and back was 5-25% slower here, and its
    non-contiguous output made a following per-step Linear copy it)."""

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: int, dilation: int = 1, bias: bool = True
    ) -> None:
        super().__init__(in_channels, out_channels, kernel_size, dilation=dilation, bias=bias)
        self.left = (kernel_size - 1) * dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, T, in] -> [B, T, out]
        if self.left:
            x = F.pad(x, (0, 0, self.left, 0))  # [B, left + T, in]
        kernel = self.weight.unsqueeze(2)  # [out, in, 1, k]
        out = F.conv2d(x.transpose(1, 2).unsqueeze(2), kernel, self.bias, dilation=(1, self.dilation[0]))
        return out.squeeze(2).transpose(1, 2)  # [B, out, 1, T] channels-last -> [B, T, out]


class SequenceOutput(nn.Module):
    """Wrap an LSTM/RNN/GRU so that a layer list sees only its sequence output, not the hidden-state tuple."""

    def __init__(self, rnn: nn.Module) -> None:
        super().__init__()
        self.rnn = rnn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.rnn(x)[0]
        return out


class Residual(nn.Module):
    """y = body(x) + shortcut(x); shortcut is the identity when the engine gives none."""

    def __init__(self, body: nn.Module, shortcut: nn.Module | None = None) -> None:
        super().__init__()
        self.body = body
        self.shortcut = shortcut if shortcut is not None else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.body(x) + self.shortcut(x)
        return out


class Concat(nn.Module):
    """Run branches on the same input and concatenate their outputs along `dim` (channels by default)."""

    def __init__(self, branches: Sequence[nn.Module], dim: int = 1) -> None:
        super().__init__()
        self.branches = nn.ModuleList(branches)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([b(x) for b in self.branches], dim=self.dim)


def _build_residual(args: Mapping[str, Any]) -> nn.Module:
    body = build_layers(args.get("body") or args.get("layers") or [])
    shortcut_layers = args.get("shortcut")
    shortcut = build_layers(shortcut_layers) if shortcut_layers else None
    return Residual(body, shortcut)


def _build_concat(args: Mapping[str, Any]) -> nn.Module:
    return Concat([build_layers(branch) for branch in args["branches"]], dim=int(args.get("dim", 1)))


CUSTOM_KINDS: dict[str, Callable[[Mapping[str, Any]], nn.Module]] = {
    "RBM": lambda a: RBM(int(a["visible"]), int(a["hidden"])),
    "Reshape": lambda a: Reshape(a["shape"]),
    "LastStep": lambda a: LastStep(),
    "Gaussian": lambda a: Gaussian(int(a["features"])),
    "CausalConv1d": lambda a: CausalConv1d(**a),
    "Residual": _build_residual,
    "Concat": _build_concat,
}


class UnknownLayerError(ValueError):
    """A layer kind that is neither a torch.nn class nor one of the advisor's own kinds."""


def build_layer(layer: Layer) -> nn.Module:
    kind = str(layer["kind"])
    args = dict(layer.get("args") or {})
    if kind in CUSTOM_KINDS:
        return CUSTOM_KINDS[kind](args)
    cls = getattr(nn, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise UnknownLayerError(
            f"unknown layer kind {kind!r}: not a torch.nn class nor one of {sorted(CUSTOM_KINDS)}"
        )
    module: nn.Module = cls(**args)
    if kind in RECURRENT_KINDS:
        return SequenceOutput(module)
    return module


def build_layers(layers: Sequence[Layer]) -> nn.Sequential:
    return nn.Sequential(*(build_layer(layer) for layer in layers))


def init_small(module: nn.Module, scale: float, *, fan_in_cap: bool = False) -> None:
    """Rule init.small (W §III-A): weights uniform in ±scale; biases start at zero. With `fan_in_cap`
    (training.init "uniform_fan_in") a weight of fan-in n is drawn within ±min(scale, 1/sqrt(n)): W's small
    start, no larger than LeCun et al.'s 1/sqrt(fan-in) (Efficient BackProp 1998, §4.6), which keeps a wide
    layer's output variance from growing with its width.

    Only weight matrices and kernels (2+ dimensions) are drawn; one-dimensional parameters are biases,
    except a normalisation layer's scale, which must stay at one or the layer would silence its input.
    """
    norm_types = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm)
    with torch.no_grad():
        for sub in module.modules():
            is_norm = isinstance(sub, norm_types)
            for name, p in sub.named_parameters(recurse=False):
                if p.dim() >= 2:
                    bound = scale
                    if fan_in_cap:
                        fan_in = nn.init._calculate_fan_in_and_fan_out(p)[0]
                        bound = min(scale, 1.0 / math.sqrt(max(1, fan_in)))
                    p.uniform_(-bound, bound)
                elif not (is_norm and name == "weight"):
                    p.zero_()


def build(candidate: Mapping[str, Any]) -> dict[str, nn.Module]:
    """One module per network key of the candidate (`model`; `generator`/`discriminator`; `encoder`/`decoder`;
    `rbm`/`classifier`). Weights are drawn uniform ±training.init_scale when the engine gives a scale.
    """
    training = candidate.get("training") or {}
    scale = training.get("init_scale")
    fan_in_cap = training.get("init") == "uniform_fan_in"
    nets: dict[str, nn.Module] = {}
    for key, layers in candidate["networks"].items():
        net = build_layers(layers)
        if scale:
            init_small(net, float(scale), fan_in_cap=fan_in_cap)
        nets[key] = net
    return nets
