"""The temporal convolutional network (TCN) for series and token sequences (Bai, Kolter & Koltun 2018, "An
Empirical Evaluation of Generic Convolutional and Recurrent Networks for Sequence Modeling", §3): stacked
residual blocks of dilated causal convolutions, the dilation doubling per level, so the last step's output
sees the whole sequence; every step is computed at once, not one after another as in a recurrent network.
"""

from __future__ import annotations

from advisor.contract import Layer, TaskSpec
from advisor.engine.candidate import Draft
from advisor.engine.families import TCN
from advisor.engine.families.recurrent import front_over_time, head_over_time, hidden_for
from advisor.engine.families.roles import MODEL
from advisor.engine.layers import count, layer
from advisor.engine.rules import reason
from advisor.engine.sizing import capacity_reason, fits_data, round_width, shrunk_reason, targets

# Bai et al.'s reference implementation (github.com/locuslab/TCN) has two regimes. A whole sequence to one
# answer (the adding problem, sequential MNIST): 25-30 channels. The next step at every step (character,
# word and music models): 150-600 channels, kernel 3. Kernel 3 everywhere: covering a sequence costs its
# levels x kernel taps per step and channel pair, least at 3 (the reference's kernel 7 on its synthetic tasks
# covers 400-784 steps in 8 levels; kernel 3 covers them in 8-9 at half the weights)
KERNEL = 3
WHOLE_CHANNELS = 32  # its 25 and 30, rounded up to a multiple of 8
CONVS_PER_BLOCK = 2  # §3.3: two dilated causal convolutions, each followed by its ReLU, then the residual
MAX_LEVELS = 12
MIN_CHANNELS = 16
# a whole sequence's answer: the last step's output joined with each channel's maximum over the steps (concat
# pooling, Howard & Ruder 2018; max-over-time, Collobert et al. 2011, Kim 2014). The last step alone misses
# "token 1 before token 2" (0.915 against the LSTM's 0.943); the maximum alone reaches 0.944 there but was
# slower to the target on images read row by row; both together held the score on every series task
# (bench/results/advice_intel-xeon-2c_tcn-readout/README.md)
READOUT = ("last", "max")


def receptive_field(levels: int, kernel: int = KERNEL) -> int:
    """Steps the last output sees: each level's two convolutions reach (kernel - 1) x 2^level steps back."""
    return 1 + CONVS_PER_BLOCK * (kernel - 1) * ((1 << levels) - 1)


def levels_for(steps: int, kernel: int = KERNEL) -> int:
    """The fewest levels whose receptive field covers the sequence (§3.2: the history a prediction needs)."""
    levels = 1
    while levels < MAX_LEVELS and receptive_field(levels, kernel) < steps:
        levels += 1
    return levels


def _next_step(spec: TaskSpec) -> bool:
    """Predicting the next step at every step (generation) rather than one answer for the whole sequence."""
    return bool(spec["task"] == "generation")


def channels_for(spec: TaskSpec) -> int:
    """A whole sequence: WHOLE_CHANNELS, at least the features per step (W §III-B); the next step: as wide as
    the recurrent candidates' units (recurrent.hidden_for: Shi et al.'s 128-512 by vocabulary), as the
    reference's language models are wider than its classifiers."""
    if _next_step(spec):
        return int(hidden_for(spec))
    features = 1 if spec["data"]["vocab_size"] is not None else int(spec["data"]["input_shape"][-1])
    return round_width(max(WHOLE_CHANNELS, features))


def tcn(spec: TaskSpec) -> Draft:
    """The channels halve (not below MIN_CHANNELS) until the weights fit the data (sizing.fits_data), as the
    recurrent candidates' units do."""
    wanted = channels_for(spec)
    channels = wanted
    draft = _tcn(spec, channels)
    examples = targets(spec)
    while channels > MIN_CHANNELS and not fits_data(_parameters(draft), examples):
        channels = max(MIN_CHANNELS, round_width(channels / 2))
        draft = _tcn(spec, channels)
    if channels < wanted:
        draft.reasons = [r for r in draft.reasons if r["rule"] != "size.capacity"]
        draft.reasons.append(shrunk_reason("Channels", wanted, channels, _parameters(draft), examples))
    return draft


def _parameters(draft: Draft) -> int:
    return count(draft.networks[MODEL], draft.io["input_shape"]).parameters


def block(inputs: int, channels: int, kernel: int, dilation: int) -> list[Layer]:
    """One residual block (§3.3): body = two causal convolutions of `dilation`, each with its ReLU; the
    shortcut is the identity, or a 1x1 convolution where the channel count changes; ReLU after the sum."""
    body = [
        layer(
            "CausalConv1d", in_channels=inputs, out_channels=channels, kernel_size=kernel, dilation=dilation
        ),
        layer("ReLU"),
        layer(
            "CausalConv1d", in_channels=channels, out_channels=channels, kernel_size=kernel, dilation=dilation
        ),
        layer("ReLU"),
    ]
    shortcut = (
        []
        if inputs == channels
        else [layer("CausalConv1d", in_channels=inputs, out_channels=channels, kernel_size=1)]
    )
    return [layer("Residual", body=body, shortcut=shortcut), layer("ReLU")]


def _tcn(spec: TaskSpec, channels: int) -> Draft:
    steps = int(spec["data"]["input_shape"][0])
    generating = _next_step(spec)
    kernel = KERNEL
    levels = levels_for(steps, kernel)
    model, reasons, width = front_over_time(spec, channels)
    inputs = width
    for level in range(levels):
        model += block(inputs, channels, kernel, 1 << level)
        inputs = channels
    # causal: step t sees the steps up to t only; a whole sequence's answer reads its last step and every
    # step's largest features (READOUT)
    tail, io, loss = head_over_time(spec, channels, width, pools=None if generating else list(READOUT))
    model += tail
    reach = receptive_field(levels, kernel)
    reasons.append(
        reason(
            "size.temporal",
            f"{levels} residual block{'s' if levels > 1 else ''} of {channels} channels, each two causal "
            f"convolutions of kernel "
            f"{kernel} dilated by {', '.join(str(2**i) for i in range(levels))}: the last step sees "
            f"{reach:,} steps back, covering your {steps:,}.",
        )
    )
    if generating:
        reasons += capacity_reason(spec, "Channels")
    else:
        reasons.append(reason("size.temporal.readout"))
    return Draft(TCN.key, "deep", {MODEL: model}, [channels] * levels, io, loss, reasons)
