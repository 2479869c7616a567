"""Which networks, best first (W §III-A, §III-D, after Patterson): one builder call per candidate."""

from __future__ import annotations

import math

from advisor.contract import Reason, TaskSpec
from advisor.engine.candidate import Draft
from advisor.engine.families import GRU, LSTM, RNN, conv, dense, generative, published, recurrent, temporal
from advisor.engine.rules import reason

DBN_MAX_INPUTS = 128 * 128  # fully connected RBMs on larger images have hundreds of millions of weights
FEW_LABELS = 0.5  # below this share of labelled examples, pretraining without labels pays (W §III-D)
# net.shallow.first for images: W §III-B puts an FFN's hidden layer at >= inputs, so one hidden layer costs
# >= inputs² weights: 16.8M at 64x64 greyscale (4,096 values), twice that at full capacity. Beyond that the
# "cheap" baseline outgrows the CNN it is meant to be checked against (W §II: a 512x512 image = 262,144
# inputs), so small images only: digits 8x8 (64), MNIST 28x28 (784), CIFAR 3x32x32 (3,072).
SHALLOW_MAX_INPUTS = 4_096
Choice = tuple[list[Draft], list[Reason]]


def drafts(spec: TaskSpec) -> Choice:
    """The candidates' drafts, best first, and the top-level reasons for the choice."""
    task, goal = spec["task"], spec["goal"]
    if task == "generation":
        return _generation(spec)
    if goal == "compress":
        return _compress(spec)
    if task == "vision":
        return _vision(spec)
    if task == "sequence":
        return _sequence(spec)
    return _shallow_first(spec)


def is_imagenet_like(spec: TaskSpec) -> bool:
    """net.published: RGB images near 224x224 and many classes, as in the ImageNet literature."""
    channels, height, width = spec["data"]["input_shape"]
    outputs = spec["data"]["outputs"] or 0
    return channels == 3 and min(height, width) >= 192 and max(height, width) <= 320 and outputs >= 100


def _vision(spec: TaskSpec) -> Choice:
    reasons = [
        reason("net.deep.structure", "Images need a deep network to learn their structure."),
        reason("net.vision.cnn"),
    ]
    result: list[Draft] = []
    if spec["goal"] == "classify" and is_imagenet_like(spec):
        accuracy = spec["target"]["accuracy"]
        order = sorted(published.TOP1, key=published.TOP1.__getitem__, reverse=True)
        why = "the most accurate"
        if accuracy is not None:
            # the cheapest network that reached the target first; those that fall short after it
            enough = [n for n in ("alexnet", "googlenet", "resnet-50") if published.TOP1[n] >= accuracy]
            order = enough + [n for n in order if n not in enough]
            why = (
                f"the cheapest that reached {accuracy:.0%} on ImageNet"
                if enough
                else f"none reached {accuracy:.0%} on ImageNet; the most accurate"
            )
        result = [published.published(name, spec) for name in order]
        reasons.append(
            reason(
                "net.published",
                f"RGB images of about 224x224 with {spec['data']['outputs']:,} classes: the ImageNet "
                f"setting. {published.NAMES[order[0]]} first ({why}); a network sized by the rules follows.",
            )
        )
    result.append(conv.cnn(spec))
    labelled = spec["data"]["labelled_fraction"]
    values = math.prod(spec["data"]["input_shape"])
    if spec["goal"] == "classify" and values > DBN_MAX_INPUTS:
        if labelled < FEW_LABELS:
            reasons.append(
                reason(
                    "net.vision.dbn",
                    f"Only {labelled:.0%} of your images are labelled, but at {values:,} values per image a "
                    "fully connected DBN would be huge: downsample the images to use one, or pretrain the "
                    "CNN.",
                )
            )
    elif spec["goal"] == "classify" and labelled < FEW_LABELS:
        result.insert(0, dense.dbn(spec))
        reasons.append(
            reason(
                "net.vision.dbn",
                f"Only {labelled:.0%} of your images are labelled: a DBN pretrained on all of them comes "
                "first.",
            )
        )
    elif spec["goal"] == "classify":
        # W §III-D offers the DBN beside the CNN; with the images labelled the CNN dominates it (more
        # accurate for less computation), so it is not listed: calibrations, probes and exports address
        # candidates by index, and a dominated one would only take a place
        reasons.append(
            reason(
                "net.vision.dbn",
                f"No DBN is listed: {labelled:.0%} of your images are labelled, so the CNN learns from the "
                "labels directly and is expected to be more accurate in less time; a DBN's pretraining pays "
                f"only when fewer than {FEW_LABELS:.0%} carry a label.",
            )
        )
    if values <= SHALLOW_MAX_INPUTS:
        baseline, notes = _shallow_baseline(spec, values)
        result.append(baseline)
        reasons += notes
    return result, reasons


def _shallow_baseline(spec: TaskSpec, values: int) -> tuple[Draft, list[Reason]]:
    """W §III-A: shallow first when unclear, deep when the data has structure. Small images have both, so
    the deep candidates lead and a shallow FFN on the flattened image follows as the cheap baseline."""
    text = (
        f"Small images ({values:,} values each): a shallow network (one hidden layer on the flattened "
        "image) is listed after the deep ones as the baseline to try. If it reaches your accuracy target on "
        "held-out data it is the cheaper choice; if it misses, use the deep network."
    )
    draft = dense.ffn(spec, deep=False)
    draft.reasons.insert(0, reason("net.shallow.first", text))
    return draft, [reason("net.shallow.first", text), reason("net.shallow.validate")]


def _sequence(spec: TaskSpec) -> Choice:
    reasons = [
        reason("net.deep.structure", "Data over time needs a deep network that models how it changes."),
        reason("net.sequence.lstm"),
        *_over_time_reasons(),
    ]
    result = [*_over_time(spec), recurrent.recurrent(spec, RNN)]
    shallow = _shallow_sequence(spec)
    if shallow is not None:
        result.append(shallow)
        reasons += [shallow.reasons[0], reason("net.shallow.validate")]
    return result, reasons


def _over_time(spec: TaskSpec) -> list[Draft]:
    """The networks over time steps the rules expect to reach a target, in the rules' order (LSTM, GRU,
    TCN): which comes first is the time they need (ordering.py, net.time.first). The plain RNN is not among
    them: its gradients fade over long sequences (Bengio, Simard & Frasconi 1994), and Bai et al. 2018 found
    it behind all three on every task they ran. On a CPU the GRU follows as an alternative: PyTorch runs it
    cell by cell there (no fused kernel, as the memory rules of advisor/engine/layers.py note), slower than
    its LSTM (measured on the adding problem at 96 units: 185 against 145 ms a batch of 128), while the time
    model prices it per FLOP like the LSTM and would put it first."""
    on_gpu = spec["hardware"]["gpu"] is not None
    lstm, gru, tcn = recurrent.recurrent(spec, LSTM), recurrent.recurrent(spec, GRU), temporal.tcn(spec)
    lstm.contends = tcn.contends = True
    gru.contends = on_gpu
    if on_gpu:
        return [lstm, gru, tcn]
    gru.reasons.insert(
        0,
        reason(
            "net.sequence.gru",
            "On a CPU the GRU follows the networks expected to reach your target as an alternative: "
            "PyTorch runs it cell by cell there, slower than its LSTM, so it would not get there sooner.",
        ),
    )
    return [lstm, tcn, gru]


def _over_time_reasons() -> list[Reason]:
    return [reason("net.sequence.gru"), reason("net.sequence.tcn")]


def _shallow_sequence(spec: TaskSpec) -> Draft | None:
    """net.shallow.first for sequences (W §III-A), after the recurrent ones as for small images: a bag of
    embeddings for token ids; a one-hidden-layer FFN on the flattened steps when they are few
    (SHALLOW_MAX_INPUTS values, as for images)."""
    if spec["goal"] not in ("classify", "regress"):
        return None
    if spec["data"]["vocab_size"] is not None:
        return dense.bag(spec)
    values = math.prod(spec["data"]["input_shape"])
    if values > SHALLOW_MAX_INPUTS:
        return None
    draft = dense.ffn(spec, deep=False)
    draft.reasons.insert(
        0,
        reason(
            "net.shallow.first",
            f"Short sequences ({values:,} values each): a shallow network on the flattened steps is listed "
            "after the recurrent ones as the baseline to try; if it reaches your target on held-out data it "
            "is the cheaper choice.",
        ),
    )
    return draft


def _generation(spec: TaskSpec) -> Choice:
    kind = spec["generation"]
    shape = spec["data"]["input_shape"]
    series = spec["data"]["vocab_size"] is not None or len(shape) == 2
    if kind == "sequence":
        reasons = [reason("net.generation.sequence"), reason("net.deep.structure"), *_over_time_reasons()]
        result = [*_over_time(spec), recurrent.recurrent(spec, RNN)]
        if spec["data"]["vocab_size"] is None and len(shape) == 2:
            result.append(generative.gan(spec))
        return result, reasons
    if spec["data"]["vocab_size"] is not None:
        # GANs and VAEs need real values to pass gradients through; token sequences go to the LSTM
        reasons = [
            reason(
                "net.generation.sequence",
                "Tokens can only be generated step by step: a network that predicts the next token from "
                "the ones before it.",
            ),
            reason(f"net.generation.{kind}"),
            *_over_time_reasons(),
        ]
        return [*_over_time(spec), recurrent.recurrent(spec, RNN)], reasons
    if kind == "random" and len(shape) == 3:
        reasons = [reason("net.generation.random")]
        result = [generative.gan(spec), generative.vae(spec)]
    elif kind == "random":
        # vectors and series: the VAE first, its decoder's variance started below the data's and its samples
        # drawn from a mixture fitted to its codes (net.generation.vector, train.prior.mixture)
        reasons = [reason("net.generation.random"), reason("net.generation.vector")]
        result = [generative.vae(spec), generative.gan(spec)]
    else:
        reasons = [reason("net.generation.controlled")]
        result = [generative.vae(spec), generative.gan(spec)]
    if len(shape) == 3 and kind == "controlled":
        # a DN regresses an image from a specification (squared error): it follows one, but random
        # generation gives it none to follow, and its mean image per specification is no varied sample
        result.append(conv.dn(spec))
        reasons.append(
            reason(
                "net.generation.dn",
                "A deconvolutional network that renders an image from its specification vector (trained on "
                "pairs of specification and image with squared error) is listed as a simpler alternative: "
                "it gives the average image for a specification, not varied samples.",
            )
        )
    if series:
        result.append(recurrent.recurrent(spec, LSTM))
    return result, reasons


def _shallow_first(spec: TaskSpec) -> Choice:
    reasons = [
        reason(
            "net.shallow.first",
            "Tabular data without image, audio or time structure: a shallow network (one hidden layer) "
            "first; if it misses your accuracy target, try the deep network listed next.",
        ),
        reason("net.shallow.validate"),
    ]
    result = [dense.ffn(spec, deep=False), dense.ffn(spec, deep=True)]
    labelled = spec["data"]["labelled_fraction"]
    if labelled < FEW_LABELS and spec["goal"] == "classify":
        result.append(dense.dbn(spec))
        reasons.append(
            reason(
                "net.pretrain.unlabelled",
                f"Only {labelled:.0%} of your examples carry a label: a DBN pretrained on all of them is "
                "listed as an alternative.",
            )
        )
    return result, reasons


def _compress(spec: TaskSpec) -> Choice:
    if spec["task"] == "vision":
        return _compress_images(spec)
    reasons = [
        reason(
            "net.shallow.first",
            "Learning a smaller code of your input: a shallow auto-encoder first, a deeper one and an RBM as "
            "alternatives.",
        ),
        reason("net.shallow.validate"),
    ]
    return [dense.ae(spec, deep=False), dense.ae(spec, deep=True), dense.rbm(spec)], reasons


def _compress_images(spec: TaskSpec) -> Choice:
    reasons = [
        reason(
            "net.deep.structure", "Images need a deep network: a convolutional auto-encoder learns the code."
        ),
    ]
    result = [conv.conv_ae(spec)]
    if math.prod(spec["data"]["input_shape"]) <= DBN_MAX_INPUTS:
        result += [dense.ae(spec, deep=False), dense.rbm(spec)]
        reasons.append(
            reason(
                "net.shallow.first",
                "A shallow auto-encoder and an RBM on the flattened image are listed as faster alternatives.",
            )
        )
        reasons.append(reason("net.shallow.validate"))
    return result, reasons
