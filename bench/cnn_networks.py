"""AlexNet and ResNet-50 as the rules engine publishes them for an ImageNet-like task.

Taking the engine's own candidates means the benchmark times exactly what the advisor recommends (and checks
that the calibration can build it): torchvision's layouts, AlexNet 64-192-384-256-256 channels with dropout,
ResNet-50 with [3, 4, 6, 3] bottleneck blocks written with the engine's `Residual` layer kind.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

PUBLISHED = {"AlexNet": "alexnet", "ResNet-50": "resnet-50"}
IMAGENET_SPEC: dict[str, Any] = {
    "task": "vision",
    "goal": "classify",
    "data": {"examples": 1_200_000, "input_shape": [3, 224, 224], "outputs": 1000},
    "hardware": {"cpu_cores": 4, "ram_gb": 64},
    "target": {"accuracy": 0.75},
}


@cache
def _published() -> dict[str, dict[str, Any]]:
    from advisor.engine import recommend

    return {c["published"]: c for c in recommend(IMAGENET_SPEC)["candidates"] if c.get("published")}


def candidate(name: str, batch_size: int) -> dict[str, Any]:
    """The engine's published candidate, at the given mini-batch (the paper's; widths are never scaled)."""
    found = _published().get(PUBLISHED[name])
    if found is None:
        raise LookupError(f"the engine published no {PUBLISHED[name]!r} candidate for an ImageNet-like spec")
    cand = copy.deepcopy(found)
    cand["training"]["batch_size"] = batch_size
    layout = (
        "torchvision 64-192-384-256-256, dropout"
        if name == "AlexNet"
        else "torchvision, bottleneck [3,4,6,3]"
    )
    cand["bench"] = {
        "name": name,
        "definition": f"engine: recommend(ImageNet-like) published={found['published']} ({layout})",
    }
    return cand
