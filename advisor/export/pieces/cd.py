"""Contrastive divergence with one Gibbs step (CD-1, Hinton 2002): how an RBM learns.

The advisor's calibration and probe train RBMs with it (advisor/calibration/steps.py),
and a downloaded train.py copies it (advisor/export/training.py).
"""

from __future__ import annotations

import torch

from advisor.export.pieces.layers import RBM


def cd1(rbm: RBM, v: torch.Tensor) -> torch.Tensor:
    """Set the RBM's gradients (descent direction) by contrastive divergence; return the
    hidden units' probabilities, the next RBM's data."""
    with torch.no_grad():
        ph: torch.Tensor = rbm(v)  # [B, H]
        h = torch.bernoulli(ph)
        pv = rbm.down(h)  # [B, V]
        ph2 = rbm(pv)  # [B, H]
        b = v.shape[0]
        rbm.weight.grad = (ph2.t() @ pv - ph.t() @ v) / b  # [H, V]
        rbm.visible_bias.grad = (pv - v).mean(0)
        rbm.hidden_bias.grad = (ph2 - ph).mean(0)
    return ph
