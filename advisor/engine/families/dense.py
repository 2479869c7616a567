"""Fully connected families: FFN (shallow and deep), auto-encoder, RBM, DBN."""

from __future__ import annotations

import math

from advisor.contract import Layer, TaskSpec
from advisor.engine.candidate import Draft, io_dict
from advisor.engine.families import AE, DBN, FFN, RBM
from advisor.engine.families.family import LOSS_CD1
from advisor.engine.families.roles import CLASSIFIER, MODEL, STACK
from advisor.engine.layers import layer
from advisor.engine.rules import reason
from advisor.engine.sizing import capacity, capacity_reason, round_width

# A deep FFN's hidden layers never go below this width. With init.small's uniform ±0.1 (variance 1/300) a
# ReLU layer of fan-in n passes n/600 of its input's variance forward and its gradient's back (He et al.
# 2015, "Delving deep into rectifiers", §2.2), so a stack of narrow layers fades towards zero, and narrow
# deep ReLU nets are often "born dead" (Lu, Shin, Su & Karniadakis 2020, "Dying ReLU and initialization").
# Measured with the probe's own training loop (iris, wine; 5-8 seeds): [4, 3, 3] stayed at chance in every
# seed, [16, 16, 16] in most (or stuck on two of three classes), [32, 32, 32] learned in 3 of 5, [64, 64, 64]
# in every seed. W §III-B's "not far more than the inputs" yields to this floor where the inputs are few.
DEEP_MIN_WIDTH = 64
# A shallow FFN's one hidden layer never goes below this width: with d inputs, h ReLU units cut the input
# space by h hyperplanes, and a bounded class region needs at least d + 1 of them (a simplex), several
# regions more. Measured (probe loop, 6 seeds): two concentric circles, 2 inputs: 2 hidden units 0.69
# accuracy, 4-16 units 0.98; iris and moons the same at 4 and 16. Practice sizes far above this
# (scikit-learn's MLP defaults to 100 hidden units).
SHALLOW_MIN_WIDTH = 16


def head(spec: TaskSpec) -> tuple[str, int | None, str]:
    """(io target, outputs, loss) for the spec's goal."""
    goal, outputs = spec["goal"], spec["data"]["outputs"]
    if goal == "regress":
        return "value", outputs, "mse"
    return "class", outputs, "cross_entropy"


def _flat_front(shape: list[int]) -> list[Layer]:
    return [layer("Flatten")] if len(shape) > 1 else []


def _relu_stack(shape: list[int], sizes: list[int], outputs: int) -> list[Layer]:
    """The input flattened, Linear + ReLU per hidden size, a Linear to `outputs` (FFN, auto-encoder)."""
    model, previous = _flat_front(shape), math.prod(shape)
    for size in sizes:
        model += [layer("Linear", in_features=previous, out_features=size), layer("ReLU")]
        previous = size
    return [*model, layer("Linear", in_features=previous, out_features=outputs)]


def ffn_sizes(inputs: int, outputs: int, factor: float, *, deep: bool) -> list[int]:
    """size.ffn.hidden (W §III-B): every hidden layer >= max(inputs, outputs), the first widened by the
    capacity factor, never below SHALLOW_MIN_WIDTH; a deep FFN tapers by halves but never below those, nor
    below DEEP_MIN_WIDTH."""
    least = max(inputs, outputs, DEEP_MIN_WIDTH if deep else SHALLOW_MIN_WIDTH)
    width = round_width(least * factor)
    if not deep:
        return [width]
    floor = round_width(least)
    return [width, max(floor, round_width(width / 2)), max(floor, round_width(width / 4))]


def _floor_note(needed: int, *, deep: bool) -> str:
    """Why the hidden layers are wider than the inputs and outputs ask for (nothing when they are not)."""
    if deep and needed < DEEP_MIN_WIDTH:
        return (
            f" Every hidden layer keeps at least {DEEP_MIN_WIDTH} nodes: a deep stack of narrow layers "
            "started from small weights passes almost no signal and does not learn."
        )
    if not deep and needed < SHALLOW_MIN_WIDTH:
        return (
            f" At least {SHALLOW_MIN_WIDTH} nodes: with very few, the network cannot draw even a simple "
            "curved boundary between classes."
        )
    return ""


def ffn(spec: TaskSpec, *, deep: bool) -> Draft:
    shape = spec["data"]["input_shape"]
    inputs = math.prod(shape)
    target, outputs, loss = head(spec)
    assert outputs is not None
    sizes = ffn_sizes(inputs, outputs, capacity(spec), deep=deep)
    width = sizes[0]
    model = _relu_stack(shape, sizes, outputs)
    reasons = [
        reason(
            "size.ffn.hidden",
            f"{'First hidden layer' if deep else 'Hidden layer'}: {width:,} nodes for {inputs:,} inputs and "
            f"{outputs:,} outputs (at least as many as inputs, not far more)."
            + _floor_note(max(inputs, outputs), deep=deep),
        ),
        *capacity_reason(spec, "Hidden layer"),
    ]
    return Draft(
        FFN.key,
        "deep" if deep else "shallow",
        {MODEL: model},
        sizes,
        io_dict(shape, target, outputs),
        loss,
        reasons,
    )


BAG_WIDTH = 64  # fastText's bag of words uses 10 hidden units for sentiment; 64 leaves room for more classes


def bag(spec: TaskSpec) -> Draft:
    """A bag of embeddings: each token id's vector, averaged over the sequence, then one linear layer
    (fastText: Joulin, Grave, Bojanowski & Mikolov 2017, "Bag of Tricks for Efficient Text Classification",
    §2). One hidden layer (the averaged embedding), no order: the shallow baseline for token sequences."""
    data = spec["data"]
    vocab, steps = data["vocab_size"], data["input_shape"]
    target, outputs, loss = head(spec)
    assert outputs is not None and vocab is not None
    model = [
        layer("EmbeddingBag", num_embeddings=vocab, embedding_dim=BAG_WIDTH, mode="mean"),
        layer("Linear", in_features=BAG_WIDTH, out_features=outputs),
    ]
    reasons = [
        reason(
            "net.shallow.first",
            f"A bag of embeddings: each of {vocab:,} token ids becomes {BAG_WIDTH} numbers, averaged over "
            "the sequence, then one linear layer. It ignores word order and trains in seconds; if it "
            "reaches your target, the recurrent network is not needed.",
        )
    ]
    return Draft(
        FFN.key,
        "shallow",
        {MODEL: model},
        [BAG_WIDTH],
        io_dict(list(steps), target, outputs, vocab_size=vocab),
        loss,
        reasons,
    )


def code_size(inputs: int, spec: TaskSpec) -> int:
    """Auto-encoder code: a quarter of the inputs, up to half for a high target or much data; < inputs."""
    return max(1, min(inputs - 1, round(inputs * capacity(spec) / 4)))


def ae(spec: TaskSpec, *, deep: bool) -> Draft:
    shape = spec["data"]["input_shape"]
    inputs = math.prod(shape)
    code = code_size(inputs, spec)
    sizes = (
        [max(code + 1, (inputs + code) // 2), code, max(code + 1, (inputs + code) // 2)] if deep else [code]
    )
    model = _relu_stack(shape, sizes, inputs)
    if len(shape) > 1:
        model.append(layer("Reshape", shape=list(shape)))
    reasons = [
        reason(
            "size.ae.bottleneck",
            f"Code layer of {code:,} units for {inputs:,} inputs ({inputs / code:.3g}x smaller); the output "
            "rebuilds all inputs.",
        ),
        *capacity_reason(spec, "Code layer"),
    ]
    return Draft(
        AE.key,
        "deep" if deep else "shallow",
        {MODEL: model},
        sizes,
        io_dict(shape, "input", None),
        "mse",
        reasons,
    )


def rbm(spec: TaskSpec) -> Draft:
    inputs = math.prod(spec["data"]["input_shape"])
    hidden = code_size(inputs, spec) if spec["goal"] == "compress" else round_width(inputs * capacity(spec))
    reasons = [
        reason(
            "net.shallow.first",
            f"A restricted Boltzmann machine: {inputs:,} visible and {hidden:,} hidden units, trained "
            "without labels by contrastive divergence; its hidden units become learned features.",
        )
    ]
    model = [layer("RBM", visible=inputs, hidden=hidden)]
    return Draft(
        RBM.key, "shallow", {MODEL: model}, [hidden], io_dict([inputs], "none", None), LOSS_CD1, reasons
    )


def dbn(spec: TaskSpec) -> Draft:
    """Hinton, Osindero & Teh 2006: RBMs stacked 784-500-500-2000 for MNIST; here scaled to the inputs."""
    inputs = math.prod(spec["data"]["input_shape"])
    target, outputs, _ = head(spec)
    assert outputs is not None
    first = round_width(min(max(inputs * 0.64, 2 * outputs, 16), 4096) * capacity(spec))
    sizes = [first, first, 4 * first]
    rbms: list[Layer] = []
    previous = inputs
    for size in sizes:
        rbms.append(layer("RBM", visible=previous, hidden=size))
        previous = size
    classifier = [layer("Linear", in_features=previous, out_features=outputs)]
    labelled = spec["data"]["labelled_fraction"]
    reasons = [
        reason(
            "net.vision.dbn" if spec["task"] == "vision" else "net.pretrain.unlabelled",
            f"A deep belief network: three RBMs ({inputs:,}-{'-'.join(f'{s:,}' for s in sizes)}, after "
            "Hinton et "
            f"al. 2006) pretrained on all {spec['data']['examples']:,} examples without labels, then "
            f"fine-tuned on the {labelled:.0%} that carry one.",
        )
    ]
    return Draft(
        DBN.key,
        "deep",
        {STACK: rbms, CLASSIFIER: classifier},
        sizes,
        io_dict([inputs], target, outputs),
        LOSS_CD1,
        reasons,
    )
