"""The registry of network families: every family the engine proposes, as one record each (family.py says
what a record holds). The engine, the calibration, the API and the pages read families from here, never by
spelling a key: `families.GAN`, `families.get(key)`, `families.family_of(candidate)`.

| key  | title                          | roles                    | step        | its layer rules |
|------|--------------------------------|--------------------------|-------------|-----------------|
| ffn  | feed-forward network           | model                    | backprop    | dense.py        |
| ae   | auto-encoder                   | model                    | backprop    | dense.py, conv.py |
| rbm  | restricted Boltzmann machine   | model                    | contrastive | dense.py        |
| dbn  | deep belief network            | rbm (stack), classifier  | pretrained  | dense.py        |
| cnn  | convolutional network          | model                    | backprop    | conv.py, published.py |
| dn   | deconvolutional network        | model                    | backprop    | conv.py         |
| rnn  | recurrent network              | model                    | backprop    | recurrent.py    |
| lstm | LSTM network                   | model                    | backprop    | recurrent.py    |
| gru  | GRU network                    | model                    | backprop    | recurrent.py    |
| tcn  | temporal convolutional network | model                    | backprop    | temporal.py     |
| gan  | generative adversarial network | generator, discriminator | adversarial | generative.py   |
| vae  | variational auto-encoder       | encoder, decoder         | variational | generative.py   |

Adding a family: a record here, its builder in its own module, a line in choice.py where it is offered
(docs/ARCHITECTURE.md, "Network families").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from advisor.engine.families.family import (
    ADVERSARIAL,
    BACKPROP,
    BATCH_IMAGE,
    BATCH_RECURRENT,
    BATCH_TEMPORAL,
    CONTRASTIVE,
    PRETRAINED,
    VARIATIONAL,
    Family,
)
from advisor.engine.families.roles import CLASSIFIER, DECODER, DISCRIMINATOR, ENCODER, GENERATOR, MODEL, STACK

FFN = Family("ffn", "feed-forward network", (MODEL,), BACKPROP)
AE = Family("ae", "auto-encoder", (MODEL,), BACKPROP)
RBM = Family("rbm", "restricted Boltzmann machine", (MODEL,), CONTRASTIVE)
DBN = Family("dbn", "deep belief network", (STACK, CLASSIFIER), PRETRAINED)
CNN = Family("cnn", "convolutional network", (MODEL,), BACKPROP, BATCH_IMAGE)
DN = Family("dn", "deconvolutional network", (MODEL,), BACKPROP, BATCH_IMAGE)
RNN = Family("rnn", "recurrent network", (MODEL,), BACKPROP, BATCH_RECURRENT)
LSTM = Family("lstm", "LSTM network", (MODEL,), BACKPROP, BATCH_RECURRENT)
GRU = Family("gru", "GRU network", (MODEL,), BACKPROP, BATCH_RECURRENT)  # Cho et al. 2014
TCN = Family("tcn", "temporal convolutional network", (MODEL,), BACKPROP, BATCH_TEMPORAL)  # Bai et al. 2018
GAN = Family("gan", "generative adversarial network", (GENERATOR, DISCRIMINATOR), ADVERSARIAL)
VAE = Family("vae", "variational auto-encoder", (ENCODER, DECODER), VARIATIONAL)

FAMILIES: dict[str, Family] = {f.key: f for f in (FFN, AE, RBM, DBN, CNN, DN, RNN, LSTM, GRU, TCN, GAN, VAE)}
KEYS = tuple(FAMILIES)


def get(key: str) -> Family:
    """The family of a key; KeyError naming it if there is none."""
    try:
        return FAMILIES[key]
    except KeyError:
        raise KeyError(f"unknown network family {key!r}: one of {', '.join(KEYS)}") from None


def family_of(candidate: Mapping[str, Any]) -> Family:
    """A candidate's family: by its `family` key, or, for a hand-written candidate without a known one, the
    first family whose roles its networks carry (a lone `model` trains as a feed-forward network does)."""
    found = FAMILIES.get(str(candidate.get("family") or ""))
    if found is not None:
        return found
    keys = set(candidate["networks"])
    return next((f for f in FAMILIES.values() if set(f.roles) <= keys), FFN)


def title_of(key: str) -> str:
    """What a page calls a family: its title, or the key itself where the registry does not know it."""
    found = FAMILIES.get(key)
    return found.title if found is not None else key
