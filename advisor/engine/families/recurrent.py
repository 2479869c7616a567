"""Recurrent families: LSTM, GRU (Cho et al. 2014: two gates instead of the LSTM's three and no separate
cell state) and the plain RNN, on features or tokens."""

from __future__ import annotations

from advisor.contract import Io, Layer, Reason, TaskSpec
from advisor.engine.candidate import Draft, io_dict
from advisor.engine.families import GRU, LSTM, RNN
from advisor.engine.families.dense import head
from advisor.engine.families.family import Family
from advisor.engine.families.roles import MODEL
from advisor.engine.layers import count, layer
from advisor.engine.rules import reason
from advisor.engine.sizing import capacity, capacity_reason, fits_data, round_width, shrunk_reason, targets

LAYERS = 2  # Shi et al. 2016: "2 LSTM layers" (LSTM-32/64); also Zaremba et al. 2014's medium model
MAX_HIDDEN = 1024
CELLS = {LSTM: "LSTM", GRU: "GRU", RNN: "RNN"}  # the layer kind each recurrent family stacks


def hidden_for(spec: TaskSpec) -> int:
    """Tokens: 128 / 256 / 512 units by vocabulary (Shi et al.'s 10,000-word LSTMs have ~512); features: at
    least the feature count (W §III-B), at least 64; both widened with the capacity factor."""
    data = spec["data"]
    vocab = data["vocab_size"]
    if vocab is not None:
        base = 128 if vocab < 1_000 else 256 if vocab < 10_000 else 512
    else:
        base = max(64, data["input_shape"][-1])
    return min(MAX_HIDDEN, round_width(base * capacity(spec)))


MIN_HIDDEN = 16


def recurrent(spec: TaskSpec, family: Family) -> Draft:
    """A family of CELLS: LSTM, GRU or RNN. The width halves (not below MIN_HIDDEN) until the
    weights fit the data (sizing.fits_data): a 10,000-word vocabulary at 768 units is 17 M weights, far more
    than 25,000 reviews can pin down."""
    hidden = hidden_for(spec)
    draft = _recurrent(spec, family, hidden)
    examples = targets(spec)
    while hidden > MIN_HIDDEN and not fits_data(_parameters(draft), examples):
        hidden = max(MIN_HIDDEN, round_width(hidden / 2))
        draft = _recurrent(spec, family, hidden)
    if hidden < hidden_for(spec):
        draft.reasons = [r for r in draft.reasons if r["rule"] != "size.capacity"]  # not widened after all
        draft.reasons.append(shrunk_reason("Units", hidden_for(spec), hidden, _parameters(draft), examples))
    return draft


def _parameters(draft: Draft) -> int:
    return count(draft.networks[MODEL], draft.io["input_shape"]).parameters


def front_over_time(spec: TaskSpec, width: int) -> tuple[list[Layer], list[Reason], int]:
    """What feeds a network over time steps: for token ids an embedding of `width` numbers (and its reason),
    for features nothing; and the width per step that reaches it."""
    data = spec["data"]
    vocab = data["vocab_size"]
    if vocab is None:
        return [], [], int(data["input_shape"][-1])
    text = f"Token input: an embedding turns each of {vocab:,} token ids into {width} numbers."
    embedding = layer("Embedding", num_embeddings=vocab, embedding_dim=width)
    return [embedding], [reason("net.tokens.embedding", text)], width


def head_over_time(
    spec: TaskSpec, hidden: int, features: int, *, pools: list[str] | None = None
) -> tuple[list[Layer], Io, str]:
    """What follows a network over time steps of `hidden` units (recurrent or temporal convolutional): its
    last layers, io and loss. Token generation: next-token logits at every step, [B, T, vocab]; series
    generation: the next step's `features` from the sequence so far (its last step); otherwise the spec's
    goal from the last step, or from the steps read by PoolOverTime(`pools`)."""
    data = spec["data"]
    vocab = data["vocab_size"]
    if spec["task"] == "generation" and vocab is not None:
        tail = [layer("Linear", in_features=hidden, out_features=vocab)]
        return tail, io_dict(data["input_shape"], "class_per_step", vocab, vocab_size=vocab), "cross_entropy"
    if spec["task"] == "generation":
        tail = [layer("LastStep"), layer("Linear", in_features=hidden, out_features=features)]
        return tail, io_dict(data["input_shape"], "value", features), "mse"
    target, outputs, loss = head(spec)
    assert outputs is not None  # normalise requires them to classify or regress (as ffn and cnn assume)
    readout = layer("PoolOverTime", pools=pools) if pools else layer("LastStep")
    tail = [readout, layer("Linear", in_features=len(pools or [0]) * hidden, out_features=outputs)]
    return tail, io_dict(data["input_shape"], target, outputs, vocab_size=vocab), loss


def _recurrent(spec: TaskSpec, family: Family, hidden: int) -> Draft:
    kind = CELLS[family]
    data = spec["data"]
    vocab = data["vocab_size"]
    model, reasons, width = front_over_time(spec, hidden)
    model.append(layer(kind, input_size=width, hidden_size=hidden, num_layers=LAYERS, batch_first=True))
    tail, io, loss = head_over_time(spec, hidden, width)
    model += tail
    reasons.append(
        reason(
            "size.recurrent",
            f"{LAYERS} stacked {kind} layers of {hidden} units"
            + (f" for {vocab:,} tokens." if vocab is not None else f" for {width} features per step."),
        )
    )
    reasons += capacity_reason(spec, "Units")
    return Draft(family.key, "deep", {MODEL: model}, [hidden] * LAYERS, io, loss, reasons)
