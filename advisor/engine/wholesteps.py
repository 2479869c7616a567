"""Whole training steps of small real networks that a device profile times through the calibration harness
(advisor.calibration.profile) and that the cost model compares with its layer-by-layer sum: the step factor
(advisor.engine.costmodel.step_factor). Plain data, so that the factor can be derived again by a later cost
model from the seconds a profile stored (`whole_step_seconds`), without measuring again.
"""

from __future__ import annotations

from typing import Any

from advisor.contract import Layer
from advisor.engine.families import FFN
from advisor.engine.families.roles import MODEL


def candidate(layers: list[Layer], input_shape: list[int], batch: int, optimizer: str) -> dict[str, Any]:
    """A classifier of `layers` as the engine describes a candidate (enough for the harness and the model)."""
    return {
        "family": FFN.key,
        "networks": {MODEL: layers},
        "io": {
            "input_shape": input_shape,
            "input_dtype": "float32",
            "vocab_size": None,
            "target": "class",
            "outputs": layers[-1]["args"]["out_features"],
            "latent_size": None,
        },
        "training": {
            "batch_size": batch,
            "optimizer": optimizer,
            "learning_rate": 0.01,
            "loss": "cross_entropy",
        },
    }


def linear(i: int, o: int) -> Layer:
    return {"kind": "Linear", "args": {"in_features": i, "out_features": o}}


RELU: Layer = {"kind": "ReLU", "args": {}}
# an MLP with Adam and a CNN on MNIST-sized images with SGD (1-3 ms each on a 2-core VM)
WHOLE_STEPS = (
    candidate([linear(32, 256), RELU, linear(256, 256), RELU, linear(256, 10)], [32], 64, "adam"),
    candidate(
        [
            {"kind": "Conv2d", "args": {"in_channels": 1, "out_channels": 8, "kernel_size": 3, "padding": 1}},
            RELU,
            {"kind": "MaxPool2d", "args": {"kernel_size": 2}},
            {"kind": "Flatten", "args": {}},
            linear(8 * 14 * 14, 10),
        ],
        [1, 28, 28],
        32,
        "sgd",
    ),
    # a wider MLP with Adam, 12-16 ms a step at 1 thread here (profile version 9)
    candidate([linear(256, 1024), RELU, linear(1024, 1024), RELU, linear(1024, 10)], [256], 128, "adam"),
)
# which of them set the factor: the wide MLP alone. The small MLP (1 ms) gave 1-thread factors of 1.04, 1.62
# and 1.42 in three quiet profiles minutes apart (bench/results/generalise_amd-epyc-2c_evaluation-4-quiet/).
# On one build-seed run's measurements (bench/results/generalise_amd-epyc-2c_wide-step/README.md) a profile's
# estimates moved between profiles by a median 1.43x with the small MLP's factor, 1.27x with the median of
# both, 1.17x with the wide one's alone; the worst single profile was 33%, 59% and 71% within ±25%, and the
# merged profile 87-89% whichever. The CNN's one convolution is the conv curve's smallest point, the least
# stable of the profile (bench/results/predict_amd-epyc-2c_quiet/README.md). The other steps' seconds are
# still stored, so a later model can choose again without profiling again.
FACTOR_STEPS = (2,)
FACTOR_RANGE = (0.5, 3.0)
# The CNN's step: a network with a transposed convolution (a decoder, a generator) multiplies by the geometric
# mean of its factor and FACTOR_STEPS' (costmodel.factor_of). On the AMD VM such networks ran 1.26x (median)
# what the wide MLP's factor priced, in 9 of 11 saved runs; the CNN's step ran 1.3-2.1x its layers there
# (1.1-1.5x on the Intel VM) where the wide MLP's ran 1.1-1.2x. Half the CNN's excess, in log, brought those
# rows from 66% to 85% within ±25% over both hosts' runs (the weight broad: a quarter to three quarters
# within a point of each other), while the CNNs themselves, already centred, would be priced 20% over at it
# (bench/results/generalise_saved-runs_decoder-factor/README.md).
DECODER_FACTOR_STEPS = (1,)

# The small MLP's step (1 ms): steps near its size take half its excess over FACTOR_STEPS' in log, fading to
# FACTOR_STEPS' alone at SMALL_STEP_SPAN x its modelled seconds (costmodel.factor_of). On the Intel VM every
# profile timed it at 1.5-1.9x its layers where the wide MLP ran 1.1-1.3x, and the generated FFNs, VAEs and
# GANs under 1.5 ms were priced 15-31% fast while those above 4 ms were within ±10%; on the AMD VM its ratio
# swung 0.8-2.1 between profiles minutes apart, which the half in log (and the median over a merged
# profile's members) damps. Re-scored on the 17 saved runs of profile version 11 (2,541 quiet rows): 82.6% ->
# 84.7% within ±25%, median |error| 11.9% -> 11.1%, no run more than 2 points worse; spans of 2 and 5 scored
# the same within a point (bench/results/generalise_saved-runs_small-step/README.md)
SMALL_STEP = 0  # index in WHOLE_STEPS
SMALL_STEP_SPAN = 3.0
