"""The reference networks of `python -m advisor.calibration.hosts --network NAME` (docs/CONTRACT.md), in the
format of docs/CANDIDATE.md: a data-parallel run across hosts tried without writing a candidate's JSON.

Sizes follow common small tasks (MNIST-like images, short token sequences, tabular data) so that a step takes
milliseconds to a few hundred milliseconds on a laptop CPU. The benchmarks time them too (bench/examples.py
adds Shi et al.'s FCN-5 from bench/networks.py); `layer`, `io_fields` and `dense_layers` write the candidate
format for them and for the tests' hand-written candidates.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Unpack

from advisor.contract import Io, Layer, LayerArgs, Trainable, Training
from advisor.engine.families import AE, CNN, FFN, GAN, LSTM, RBM
from advisor.engine.families.family import LOSS_ADVERSARIAL, LOSS_CD1
from advisor.engine.families.roles import DISCRIMINATOR, GENERATOR, MODEL


def layer(kind: str, **args: Unpack[LayerArgs]) -> Layer:
    """One layer of a network in the candidate format (tests' hand-written candidates use it too)."""
    return {"kind": kind, "args": args}


def io_fields(
    shape: list[int],
    target: str,
    outputs: int | None,
    *,
    input_dtype: str = "float32",
    vocab_size: int | None = None,
    latent_size: int | None = None,
) -> Io:
    return {
        "input_shape": shape,
        "input_dtype": input_dtype,
        "vocab_size": vocab_size,
        "target": target,
        "outputs": outputs,
        "latent_size": latent_size,
    }


def _candidate(family: str, networks: dict[str, list[Layer]], io: Io, loss: str) -> Trainable:
    return {"family": family, "networks": networks, "io": io, "training": _training(64, loss)}


def dense_layers(
    sizes: list[int], activation: str, *, flatten: bool = False, last: str | None = None
) -> list[Layer]:
    """Linear layers through `sizes` with `activation` between them (optionally after a Flatten and
    followed by a `last` activation): the stacks of the MLP, autoencoder, GAN and FCN-5 examples and of
    the tests' hand-written candidates."""
    layers = [layer("Flatten")] if flatten else []
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(sizes)):
        layers += [layer(activation)] if i else []
        layers.append(layer("Linear", in_features=fan_in, out_features=fan_out))
    return layers + ([layer(last)] if last else [])


def _training(batch: int, loss: str) -> Training:
    return {
        "batch_size": batch,
        "init_scale": 0.1,
        "optimizer": "sgd",
        "learning_rate": 0.01,
        "epochs": 1,
        "loss": loss,
        "momentum": 0.9,
    }


def tabular_mlp() -> Trainable:
    dense = dense_layers([64, 128, 10], "ReLU")
    return _candidate(FFN.key, {MODEL: dense}, io_fields([64], "class", 10), "cross_entropy")


def mnist_mlp() -> Trainable:
    dense = dense_layers([784, 512, 10], "Sigmoid", flatten=True)
    return _candidate(FFN.key, {MODEL: dense}, io_fields([1, 28, 28], "class", 10), "cross_entropy")


def mnist_cnn() -> Trainable:
    conv = [
        layer("Conv2d", in_channels=1, out_channels=16, kernel_size=3, padding=1),
        layer("ReLU"),
        layer("MaxPool2d", kernel_size=2),
        layer("Conv2d", in_channels=16, out_channels=32, kernel_size=3, padding=1),
        layer("ReLU"),
        layer("MaxPool2d", kernel_size=2),
        layer("Flatten"),
        layer("Linear", in_features=32 * 7 * 7, out_features=10),
    ]
    return _candidate(CNN.key, {MODEL: conv}, io_fields([1, 28, 28], "class", 10), "cross_entropy")


def text_lstm() -> Trainable:
    layers = [
        layer("Embedding", num_embeddings=2000, embedding_dim=64),
        layer("LSTM", input_size=64, hidden_size=128, num_layers=1, batch_first=True),
        layer("LastStep"),
        layer("Linear", in_features=128, out_features=5),
    ]
    return _candidate(
        LSTM.key,
        {MODEL: layers},
        io_fields([32], "class", 5, input_dtype="int64", vocab_size=2000),
        "cross_entropy",
    )


def mnist_ae() -> Trainable:
    layers = dense_layers([784, 64, 784], "ReLU", flatten=True, last="Sigmoid")
    return _candidate(AE.key, {MODEL: layers}, io_fields([1, 28, 28], "input", None), "bce")


def mnist_gan() -> Trainable:
    gen = [*dense_layers([32, 256, 784], "ReLU", last="Sigmoid"), layer("Reshape", shape=[1, 28, 28])]
    disc = dense_layers([784, 256, 1], "LeakyReLU", flatten=True)
    return _candidate(
        GAN.key,
        {GENERATOR: gen, DISCRIMINATOR: disc},
        io_fields([1, 28, 28], "none", None, latent_size=32),
        LOSS_ADVERSARIAL,
    )


def mnist_rbm() -> Trainable:
    return _candidate(
        RBM.key, {MODEL: [layer("RBM", visible=784, hidden=256)]}, io_fields([784], "none", None), LOSS_CD1
    )


EXAMPLES: dict[str, Callable[[], Trainable]] = {
    "tabular-mlp": tabular_mlp,
    "mnist-mlp": mnist_mlp,
    "mnist-cnn": mnist_cnn,
    "text-lstm": text_lstm,
    "mnist-ae": mnist_ae,
    "mnist-gan": mnist_gan,
    "mnist-rbm": mnist_rbm,
}
