"""Small hand-written candidates of every family, in the format of docs/CANDIDATE.md (tiny, fast)."""

from __future__ import annotations

from typing import Any


def L(kind: str, **args: Any) -> dict[str, Any]:
    return {"kind": kind, "args": args}


def _training(loss: str, batch: int = 16, init_scale: float | None = 0.1) -> dict[str, Any]:
    return {
        "batch_size": batch,
        "init_scale": init_scale,
        "optimizer": "sgd",
        "learning_rate": 0.01,
        "epochs": 1,
        "loss": loss,
    }


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


def ffn(features: int = 20, hidden: int = 32, outputs: int = 3) -> dict[str, Any]:
    return {
        "family": "ffn",
        "networks": {
            "model": [
                L("Linear", in_features=features, out_features=hidden),
                L("Sigmoid"),
                L("Linear", in_features=hidden, out_features=outputs),
            ]
        },
        "io": _io([features], "class", outputs),
        "training": _training("cross_entropy"),
    }


def ae() -> dict[str, Any]:
    return {
        "family": "ae",
        "networks": {
            "model": [
                L("Linear", in_features=24, out_features=8),
                L("ReLU"),
                L("Linear", in_features=8, out_features=24),
                L("Sigmoid"),
            ]
        },
        "io": _io([24], "input", None),
        "training": _training("bce"),
    }


def cnn() -> dict[str, Any]:
    return {
        "family": "cnn",
        "networks": {
            "model": [
                L("Conv2d", in_channels=1, out_channels=4, kernel_size=3, padding=1),
                L("BatchNorm2d", num_features=4),
                L("ReLU"),
                L("MaxPool2d", kernel_size=2),
                L("Flatten"),
                L("Linear", in_features=4 * 6 * 6, out_features=5),
            ]
        },
        "io": _io([1, 12, 12], "class", 5),
        "training": _training("cross_entropy"),
    }


def dn() -> dict[str, Any]:
    return {
        "family": "dn",
        "networks": {
            "model": [
                L("Linear", in_features=6, out_features=4 * 4 * 4),
                L("Reshape", shape=[4, 4, 4]),
                L("ConvTranspose2d", in_channels=4, out_channels=2, kernel_size=2, stride=2),
                L("ReLU"),
                L("ConvTranspose2d", in_channels=2, out_channels=1, kernel_size=2, stride=2),
            ]
        },
        "io": _io([6], "value", 16 * 16),
        "training": _training("mse"),
    }


def rnn(kind: str = "RNN") -> dict[str, Any]:
    return {
        "family": kind.lower(),
        "networks": {
            "model": [
                L(kind, input_size=5, hidden_size=12, batch_first=True),
                L("LastStep"),
                L("Linear", in_features=12, out_features=4),
            ]
        },
        "io": _io([7, 5], "class", 4),
        "training": _training("cross_entropy"),
    }


def lstm_tokens() -> dict[str, Any]:
    """Sequence generation over tokens: a label per time step, logits [B, T, V]."""
    return {
        "family": "lstm",
        "networks": {
            "model": [
                L("Embedding", num_embeddings=30, embedding_dim=8),
                L("LSTM", input_size=8, hidden_size=16, num_layers=2, batch_first=True),
                L("Linear", in_features=16, out_features=30),
            ]
        },
        "io": _io([6], "class_per_step", 30, input_dtype="int64", vocab_size=30),
        "training": _training("cross_entropy"),
    }


def gan() -> dict[str, Any]:
    return {
        "family": "gan",
        "networks": {
            "generator": [
                L("Linear", in_features=4, out_features=16),
                L("ReLU"),
                L("Linear", in_features=16, out_features=36),
                L("Sigmoid"),
                L("Reshape", shape=[1, 6, 6]),
            ],
            "discriminator": [
                L("Flatten"),
                L("Linear", in_features=36, out_features=16),
                L("LeakyReLU", negative_slope=0.2),
                L("Linear", in_features=16, out_features=1),
            ],
        },
        "io": _io([1, 6, 6], "none", None, latent_size=4),
        "training": _training("gan"),
    }


def vae() -> dict[str, Any]:
    return {
        "family": "vae",
        "networks": {
            "encoder": [
                L("Flatten"),
                L("Linear", in_features=36, out_features=16),
                L("ReLU"),
                L("Linear", in_features=16, out_features=2 * 3),
            ],
            "decoder": [
                L("Linear", in_features=3, out_features=16),
                L("ReLU"),
                L("Linear", in_features=16, out_features=36),
                L("Sigmoid"),
                L("Reshape", shape=[1, 6, 6]),
            ],
        },
        "io": _io([1, 6, 6], "none", None, latent_size=3),
        "training": _training("elbo"),
    }


def rbm() -> dict[str, Any]:
    return {
        "family": "rbm",
        "networks": {"model": [L("RBM", visible=36, hidden=12)]},
        "io": _io([36], "none", None),
        "training": _training("cd1"),
    }


def dbn() -> dict[str, Any]:
    return {
        "family": "dbn",
        "networks": {
            "rbm": [L("RBM", visible=36, hidden=16), L("RBM", visible=16, hidden=8)],
            "classifier": [L("Linear", in_features=8, out_features=3)],
        },
        "io": _io([1, 6, 6], "class", 3),
        "training": _training("cd1"),
    }


ALL_FAMILIES = {
    "ffn": ffn,
    "ae": ae,
    "cnn": cnn,
    "dn": dn,
    "rnn": rnn,
    "lstm": lstm_tokens,
    "gan": gan,
    "vae": vae,
    "rbm": rbm,
    "dbn": dbn,
}


def wide_mlp(width: int = 4096) -> dict[str, Any]:
    """Gradients of width*width floats (64 MiB at 4096): above glibc's largest dynamic mmap threshold
    (32 MiB), so the default malloc maps and unmaps them every step."""
    return {
        "family": "ffn",
        "networks": {
            "model": [
                L("Linear", in_features=width, out_features=width),
                L("ReLU"),
                L("Linear", in_features=width, out_features=10),
            ]
        },
        "io": _io([width], "class", 10),
        "training": _training("cross_entropy", batch=8),
    }
