"""The pages of PyTorch's own code a network's first training steps bring into the resident set.

A fresh process that has paid the runtime's fixed cost (advisor/calibration/resident.py: a perceptron with
Linear, ReLU, cross-entropy and Adam) still faults in the code of every kernel it has not run yet the first
time the network uses it: file-backed pages of libtorch and oneDNN, the same at every batch size (measured:
cnn [32-64-128] grows by 9.6 MB of them at batch 8 and at 128, dn by 12.2 MB, the LSTM by 9.2 MB). Each
figure below is one layer kind's (or loss's) file-backed growth in a fresh process after that fixed cost,
a tiny network around it, less what its other parts add alone (torch 2.13.0+cpu, AMD EPYC, tuned glibc;
bench/results/memory_amd-epyc-2c_repeats/README.md). Kinds sharing a library count once, at their group's
largest: oneDNN's
convolutions (a transposed one's with a plain one measured 10.9 MB together, 10.6 MB alone) and the
recurrent kernels (LSTM with RNN 9.3 MB, LSTM alone 8.6 MB).
"""

from __future__ import annotations

from advisor.contract import Trainable
from advisor.engine.layers import kinds_in

MB = 1_000_000

# group -> {kind: bytes}; a group counts its largest member present
_GROUPS: dict[str, dict[str, float]] = {
    # a convolution reading 8 channels or more uses oneDNN's blocked kernel too: 9.0 MB against 8.0 MB
    # for a first layer's alone; a causal 1-D one runs oneDNN's channels-last 2-D kernel and the padding's
    # (9.8 MB, 8.7 MB without padding: bench/results/curves_amd-epyc-2c/)
    "convolution": {"Conv2d": 9.0 * MB, "ConvTranspose2d": 10.9 * MB, "CausalConv1d": 9.8 * MB},
    "recurrent": {"LSTM": 8.6 * MB, "GRU": 1.9 * MB, "RNN": 1.35 * MB},
    "MaxPool2d": {"MaxPool2d": 0.55 * MB},
    "AvgPool2d": {"AvgPool2d": 0.6 * MB},
    "BatchNorm2d": {"BatchNorm2d": 0.95 * MB},
    "Embedding": {"Embedding": 0.6 * MB},
    "LeakyReLU": {"LeakyReLU": 0.4 * MB},
    "Sigmoid": {"Sigmoid": 0.26 * MB},
    "Tanh": {"Tanh": 0.3 * MB},
    "Dropout": {"Dropout": 0.2 * MB},
}
_LOSSES = {"mse": 0.92 * MB}  # cross-entropy is the fixed cost's; the others are not measured


def code_pages(candidate: Trainable) -> int:
    """Bytes of library code the candidate's training brings in beyond the runtime's fixed cost."""
    kinds = kinds_in(candidate)
    total = sum(max((b for k, b in group.items() if k in kinds), default=0.0) for group in _GROUPS.values())
    loss = str((candidate.get("training") or {}).get("loss") or "")
    return round(total + _LOSSES.get(loss, 0.0))
