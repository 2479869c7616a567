"""Small hand-written candidates of every family, in the format of docs/CANDIDATE.md (tiny, fast)."""

from __future__ import annotations

from typing import Any

from advisor.calibration.examples import dense_layers, layer
from advisor.calibration.examples import io_fields as _io

L = layer


def _training(loss: str, batch: int = 16, init_scale: float | None = 0.1) -> dict[str, Any]:
    return {
        "batch_size": batch,
        "init_scale": init_scale,
        "optimizer": "sgd",
        "learning_rate": 0.01,
        "epochs": 1,
        "loss": loss,
    }


def _candidate(family: str, networks: dict[str, Any], io: dict[str, Any], loss: str) -> dict[str, Any]:
    return {"family": family, "networks": networks, "io": io, "training": _training(loss)}


def ffn(
    features: int = 20, hidden: int = 32, outputs: int = 3, activation: str = "Sigmoid"
) -> dict[str, Any]:
    return _candidate(
        "ffn",
        {
            "model": dense_layers([features, hidden, outputs], activation),
        },
        _io([features], "class", outputs),
        "cross_entropy",
    )


def ae() -> dict[str, Any]:
    return _candidate(
        "ae",
        {
            "model": dense_layers([24, 8, 24], "ReLU", last="Sigmoid"),
        },
        _io([24], "input", None),
        "bce",
    )


def cnn() -> dict[str, Any]:
    return _candidate(
        "cnn",
        {
            "model": [
                L("Conv2d", in_channels=1, out_channels=4, kernel_size=3, padding=1),
                L("BatchNorm2d", num_features=4),
                L("ReLU"),
                L("MaxPool2d", kernel_size=2),
                L("Flatten"),
                L("Linear", in_features=4 * 6 * 6, out_features=5),
            ]
        },
        _io([1, 12, 12], "class", 5),
        "cross_entropy",
    )


def dn() -> dict[str, Any]:
    return _candidate(
        "dn",
        {
            "model": [
                L("Linear", in_features=6, out_features=4 * 4 * 4),
                L("Reshape", shape=[4, 4, 4]),
                L("ConvTranspose2d", in_channels=4, out_channels=2, kernel_size=2, stride=2),
                L("ReLU"),
                L("ConvTranspose2d", in_channels=2, out_channels=1, kernel_size=2, stride=2),
            ]
        },
        _io([6], "value", 16 * 16),
        "mse",
    )


def rnn(kind: str = "RNN") -> dict[str, Any]:
    return _candidate(
        kind.lower(),
        {
            "model": [
                L(kind, input_size=5, hidden_size=12, batch_first=True),
                L("LastStep"),
                L("Linear", in_features=12, out_features=4),
            ]
        },
        _io([7, 5], "class", 4),
        "cross_entropy",
    )


def tcn() -> dict[str, Any]:
    """Two residual blocks of dilated causal convolutions (the second's shortcut the identity), then the last
    step's classes: Bai et al. 2018's temporal convolutional network, small."""

    def block(inputs: int, dilation: int) -> list[dict[str, Any]]:
        body = [
            L("CausalConv1d", in_channels=inputs, out_channels=8, kernel_size=3, dilation=dilation),
            L("ReLU"),
            L("CausalConv1d", in_channels=8, out_channels=8, kernel_size=3, dilation=dilation),
            L("ReLU"),
        ]
        shortcut = (
            [] if inputs == 8 else [L("CausalConv1d", in_channels=inputs, out_channels=8, kernel_size=1)]
        )
        return [L("Residual", body=body, shortcut=shortcut), L("ReLU")]

    return _candidate(
        "tcn",
        {"model": [*block(5, 1), *block(8, 2), L("LastStep"), L("Linear", in_features=8, out_features=4)]},
        _io([7, 5], "class", 4),
        "cross_entropy",
    )


def lstm_tokens() -> dict[str, Any]:
    """Sequence generation over tokens: a label per time step, logits [B, T, V]."""
    return _candidate(
        "lstm",
        {
            "model": [
                L("Embedding", num_embeddings=30, embedding_dim=8),
                L("LSTM", input_size=8, hidden_size=16, num_layers=2, batch_first=True),
                L("Linear", in_features=16, out_features=30),
            ]
        },
        _io([6], "class_per_step", 30, input_dtype="int64", vocab_size=30),
        "cross_entropy",
    )


def gan() -> dict[str, Any]:
    return _candidate(
        "gan",
        {
            "generator": [*dense_layers([4, 16, 36], "ReLU", last="Sigmoid"), L("Reshape", shape=[1, 6, 6])],
            "discriminator": [
                L("Flatten"),
                L("Linear", in_features=36, out_features=16),
                L("LeakyReLU", negative_slope=0.2),
                L("Linear", in_features=16, out_features=1),
            ],
        },
        _io([1, 6, 6], "none", None, latent_size=4),
        "gan",
    )


def vae() -> dict[str, Any]:
    return _candidate(
        "vae",
        {
            "encoder": dense_layers([36, 16, 2 * 3], "ReLU", flatten=True),
            "decoder": [*dense_layers([3, 16, 36], "ReLU", last="Sigmoid"), L("Reshape", shape=[1, 6, 6])],
        },
        _io([1, 6, 6], "none", None, latent_size=3),
        "elbo",
    )


def vae_gaussian() -> dict[str, Any]:
    """A VAE for vectors: its decoder's Gaussian layer holds the learned variances (loss elbo_gaussian)."""
    return _candidate(
        "vae",
        {
            "encoder": dense_layers([6, 16, 2 * 3], "ReLU"),
            "decoder": [*dense_layers([3, 16, 6], "ReLU"), L("Gaussian", features=6)],
        },
        _io([6], "none", None, latent_size=3),
        "elbo_gaussian",
    )


def rbm() -> dict[str, Any]:
    return _candidate("rbm", {"model": [L("RBM", visible=36, hidden=12)]}, _io([36], "none", None), "cd1")


def dbn() -> dict[str, Any]:
    return _candidate(
        "dbn",
        {
            "rbm": [L("RBM", visible=36, hidden=16), L("RBM", visible=16, hidden=8)],
            "classifier": [L("Linear", in_features=8, out_features=3)],
        },
        _io([1, 6, 6], "class", 3),
        "cd1",
    )


ALL_FAMILIES = {
    "ffn": ffn,
    "ae": ae,
    "cnn": cnn,
    "dn": dn,
    "rnn": rnn,
    "gru": lambda: rnn("GRU"),
    "lstm": lstm_tokens,
    "tcn": tcn,
    "gan": gan,
    "vae": vae,
    "rbm": rbm,
    "dbn": dbn,
}


def wide_mlp(width: int = 4096) -> dict[str, Any]:
    """Gradients of width*width floats (64 MiB at 4096): above glibc's largest dynamic mmap threshold
    (32 MiB), so the default malloc maps and unmaps them every step."""
    return {**ffn(width, width, 10, activation="ReLU"), "training": _training("cross_entropy", batch=8)}
