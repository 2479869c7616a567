"""Reference candidates for the benchmarks (bench harness / epoch), in the format of docs/CANDIDATE.md.

Sizes follow common small tasks (MNIST-like images, short token sequences, tabular data) so that a step takes
milliseconds to a few hundred milliseconds on a laptop CPU; `fcn5` is Shi et al.'s FCN-5 (DLBench's Caffe
sizes: 26,752 inputs and outputs, three hidden layers of 2048 sigmoid units).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Candidate = dict[str, Any]


def _layer(kind: str, **args: Any) -> dict[str, Any]:
    return {"kind": kind, "args": args}


def _io(shape: list[int], target: str, outputs: int | None, **extra: Any) -> dict[str, Any]:
    io: dict[str, Any] = {
        "input_shape": shape,
        "input_dtype": "float32",
        "vocab_size": None,
        "target": target,
        "outputs": outputs,
        "latent_size": None,
    }
    io.update(extra)
    return io


def _training(batch: int, loss: str) -> dict[str, Any]:
    return {
        "batch_size": batch,
        "init_scale": 0.1,
        "optimizer": "sgd",
        "learning_rate": 0.01,
        "epochs": 1,
        "loss": loss,
        "momentum": 0.9,
    }


def tabular_mlp() -> Candidate:
    dense = [
        _layer("Linear", in_features=64, out_features=128),
        _layer("ReLU"),
        _layer("Linear", in_features=128, out_features=10),
    ]
    return {
        "family": "ffn",
        "networks": {"model": dense},
        "io": _io([64], "class", 10),
        "training": _training(64, "cross_entropy"),
    }


def mnist_mlp() -> Candidate:
    dense = [
        _layer("Flatten"),
        _layer("Linear", in_features=784, out_features=512),
        _layer("Sigmoid"),
        _layer("Linear", in_features=512, out_features=10),
    ]
    return {
        "family": "ffn",
        "networks": {"model": dense},
        "io": _io([1, 28, 28], "class", 10),
        "training": _training(64, "cross_entropy"),
    }


def mnist_cnn() -> Candidate:
    conv = [
        _layer("Conv2d", in_channels=1, out_channels=16, kernel_size=3, padding=1),
        _layer("ReLU"),
        _layer("MaxPool2d", kernel_size=2),
        _layer("Conv2d", in_channels=16, out_channels=32, kernel_size=3, padding=1),
        _layer("ReLU"),
        _layer("MaxPool2d", kernel_size=2),
        _layer("Flatten"),
        _layer("Linear", in_features=32 * 7 * 7, out_features=10),
    ]
    return {
        "family": "cnn",
        "networks": {"model": conv},
        "io": _io([1, 28, 28], "class", 10),
        "training": _training(64, "cross_entropy"),
    }


def text_lstm() -> Candidate:
    layers = [
        _layer("Embedding", num_embeddings=2000, embedding_dim=64),
        _layer("LSTM", input_size=64, hidden_size=128, num_layers=1, batch_first=True),
        _layer("LastStep"),
        _layer("Linear", in_features=128, out_features=5),
    ]
    return {
        "family": "lstm",
        "networks": {"model": layers},
        "io": _io([32], "class", 5, input_dtype="int64", vocab_size=2000),
        "training": _training(64, "cross_entropy"),
    }


def mnist_ae() -> Candidate:
    layers = [
        _layer("Flatten"),
        _layer("Linear", in_features=784, out_features=64),
        _layer("ReLU"),
        _layer("Linear", in_features=64, out_features=784),
        _layer("Sigmoid"),
    ]
    return {
        "family": "ae",
        "networks": {"model": layers},
        "io": _io([1, 28, 28], "input", None),
        "training": _training(64, "bce"),
    }


def mnist_gan() -> Candidate:
    gen = [
        _layer("Linear", in_features=32, out_features=256),
        _layer("ReLU"),
        _layer("Linear", in_features=256, out_features=784),
        _layer("Sigmoid"),
        _layer("Reshape", shape=[1, 28, 28]),
    ]
    disc = [
        _layer("Flatten"),
        _layer("Linear", in_features=784, out_features=256),
        _layer("LeakyReLU"),
        _layer("Linear", in_features=256, out_features=1),
    ]
    return {
        "family": "gan",
        "networks": {"generator": gen, "discriminator": disc},
        "io": _io([1, 28, 28], "none", None, latent_size=32),
        "training": _training(64, "gan"),
    }


def mnist_rbm() -> Candidate:
    return {
        "family": "rbm",
        "networks": {"model": [_layer("RBM", visible=784, hidden=256)]},
        "io": _io([784], "none", None),
        "training": _training(64, "cd1"),
    }


def fcn5() -> Candidate:
    width, io_size = 2048, 26752
    layers: list[dict[str, Any]] = []
    previous = io_size
    for _ in range(3):
        layers += [_layer("Linear", in_features=previous, out_features=width), _layer("Sigmoid")]
        previous = width
    layers.append(_layer("Linear", in_features=width, out_features=io_size))
    return {
        "family": "ffn",
        "networks": {"model": layers},
        "io": _io([io_size], "class", io_size),
        "training": _training(64, "cross_entropy"),
    }


EXAMPLES: dict[str, Callable[[], Candidate]] = {
    "tabular-mlp": tabular_mlp,
    "mnist-mlp": mnist_mlp,
    "mnist-cnn": mnist_cnn,
    "text-lstm": text_lstm,
    "mnist-ae": mnist_ae,
    "mnist-gan": mnist_gan,
    "mnist-rbm": mnist_rbm,
    "fcn-5": fcn5,
}
