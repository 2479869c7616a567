"""The roles of a candidate's networks (its `networks` keys, docs/CANDIDATE.md) and what each is fed. A
family's record (advisor/engine/families/__init__.py) lists its roles. Plain data: every module may import it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MODEL = "model"
GENERATOR = "generator"  # a GAN's, fed io.latent_size noise values
DISCRIMINATOR = "discriminator"
ENCODER = "encoder"  # a VAE's; its last layer gives mean and log-variance
DECODER = "decoder"  # fed io.latent_size values
STACK = "rbm"  # a DBN's RBMs, pre-trained one by one
CLASSIFIER = "classifier"  # a DBN's, fed the stack's last hidden units
LATENT_ROLES = (GENERATOR, DECODER)

Shape = tuple[int, ...]


def network_input(candidate: Mapping[str, Any], role: str) -> Shape:
    """The per-example input shape of one network of a candidate: the data's (an RBM, first of a stack, sees
    it as one vector), the latent code (generator, decoder) or the stack's last hidden units (classifier)."""
    io, networks = candidate["io"], candidate["networks"]
    if role in LATENT_ROLES:
        return (int(io["latent_size"]),)
    if role == CLASSIFIER:
        return (int(networks[STACK][-1]["args"]["hidden"]),)
    shape = tuple(int(s) for s in io["input_shape"])
    layers = networks[role]
    return (math.prod(shape),) if layers and layers[0]["kind"] == "RBM" else shape


def network_inputs(candidate: Mapping[str, Any]) -> dict[str, Shape]:
    """The input shape of each network of a candidate, by role."""
    return {role: network_input(candidate, role) for role in candidate["networks"]}
