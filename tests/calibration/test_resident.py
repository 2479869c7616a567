"""training_rss_growth: a fresh process's resident-set growth over training a network, the runtime's
fixed cost (pay_fixed_cost) paid first and excluded."""

from __future__ import annotations

import json
import subprocess
import sys

# 1024 -> 4096 -> 4: 4.2 M parameters, 16.8 MB of float32 weights.
WIDE = {
    "family": "ffn",
    "networks": {
        "model": [
            {"kind": "Linear", "args": {"in_features": 1024, "out_features": 4096}},
            {"kind": "ReLU", "args": {}},
            {"kind": "Linear", "args": {"in_features": 4096, "out_features": 4}},
        ]
    },
    "io": {"input_shape": [1024], "input_dtype": "float32", "target": "class", "outputs": 4},
    "training": {"optimizer": "adam", "learning_rate": 0.001, "loss": "cross_entropy"},
}

CHILD = """
import json, sys
from advisor.calibration.memory import rss_bytes
from advisor.calibration.resident import pay_fixed_cost, training_rss_growth
before = rss_bytes()
pay_fixed_cost()
fixed = rss_bytes() - before
growth = training_rss_growth(json.loads(sys.argv[1]), batch_size=16, steps=3)
print(json.dumps({"fixed": fixed, "growth": growth}))
"""


def test_the_growth_holds_weights_gradients_and_adam_state_but_not_the_fixed_cost() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(WIDE)], capture_output=True, text=True, check=True
    )
    measured = json.loads(out.stdout.strip().splitlines()[-1])
    weights = (1024 * 4096 + 4096 + 4096 * 4 + 4) * 4
    # weights, their gradients and Adam's two moments are written, so resident, during the steps
    assert measured["growth"] >= 4 * weights
    # the fixed cost (tens of MB: torch's kernels, thread pool, autograd, Adam) was paid before and is not in
    # the growth: counted again, the growth would be at least the two together
    assert measured["fixed"] > 10e6 and measured["growth"] < 4 * weights + measured["fixed"]
