"""One small network per layer kind (and Adam), the kind under test carrying most of the memory: the memory
account (test_memory.py) and the exact counts (test_counts.py) run on every kind the engine knows, whether
or not a family proposes it yet."""

from __future__ import annotations

from typing import Any

from tests.calibration import candidates as C


def L(kind: str, **args: Any) -> dict[str, Any]:
    return {"kind": kind, "args": args}


def one_network(
    layers: list[dict[str, Any]],
    shape: list[int],
    *,
    target: str = "class",
    vocab: int | None = None,
    optimizer: str = "sgd",
) -> dict[str, Any]:
    return {
        "family": "ffn",
        "networks": {"model": layers},
        "io": {
            "input_shape": shape,
            "input_dtype": "int64" if vocab else "float32",
            "vocab_size": vocab,
            "target": target,
            "outputs": 10,
            "latent_size": None,
        },
        "training": {
            "batch_size": 32,
            "optimizer": optimizer,
            "learning_rate": 0.01,
            "momentum": 0.9,
            "loss": "cross_entropy" if target == "class" else "mse",
        },
    }


def _head(features: int) -> list[dict[str, Any]]:
    return [L("Flatten"), L("Linear", in_features=features, out_features=10)]


def _conv(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [L("Conv2d", in_channels=3, out_channels=8, kernel_size=3, padding=1), *middle]


def _wide(*middle: dict[str, Any]) -> dict[str, Any]:
    """64 features through 1024 wide `middle` layers to 10 outputs."""
    return one_network(
        [
            L("Linear", in_features=64, out_features=1024),
            *middle,
            L("Linear", in_features=1024, out_features=10),
        ],
        [64],
    )


def _recurrent(kind: str, **extra: Any) -> dict[str, Any]:
    """A `kind` recurrent layer over 32 steps of 32 features, its last step to 10 outputs."""
    return one_network(
        [
            L(kind, input_size=32, hidden_size=128, batch_first=True, **extra),
            L("LastStep"),
            L("Linear", in_features=128, out_features=10),
        ],
        [32, 32],
    )


# one small network per layer kind; the kind under test carries most of the memory
KINDS: dict[str, dict[str, Any]] = {
    "Linear": one_network(
        [L("Linear", in_features=256, out_features=512), L("Linear", in_features=512, out_features=10)], [256]
    ),
    "ReLU": _wide(L("ReLU")),
    "LeakyReLU": _wide(L("LeakyReLU", negative_slope=0.2)),
    "Sigmoid": _wide(L("Sigmoid")),
    "Tanh": _wide(L("Tanh")),
    "Dropout": _wide(L("ReLU"), L("Dropout", p=0.5)),
    "Flatten": one_network([*_conv(), *_head(8 * 16 * 16)], [3, 16, 16]),
    "Reshape": one_network(
        [
            L("Linear", in_features=64, out_features=512),
            L("Reshape", shape=[8, 8, 8]),
            L("Conv2d", in_channels=8, out_channels=8, kernel_size=3, padding=1),
            *_head(512),
        ],
        [64],
    ),
    "Conv2d": one_network(
        [
            *_conv(L("ReLU"), L("Conv2d", in_channels=8, out_channels=16, kernel_size=3, padding=1)),
            *_head(16 * 16 * 16),
        ],
        [3, 16, 16],
    ),
    "ConvTranspose2d": one_network(
        [
            *_conv(L("ConvTranspose2d", in_channels=8, out_channels=8, kernel_size=4, stride=2, padding=1)),
            *_head(8 * 32 * 32),
        ],
        [3, 16, 16],
    ),
    "MaxPool2d": one_network(
        [*_conv(L("ReLU"), L("MaxPool2d", kernel_size=2)), *_head(8 * 8 * 8)], [3, 16, 16]
    ),
    "AvgPool2d": one_network(
        [*_conv(L("ReLU"), L("AvgPool2d", kernel_size=2)), *_head(8 * 8 * 8)], [3, 16, 16]
    ),
    "AdaptiveAvgPool2d": one_network(
        [*_conv(L("ReLU"), L("AdaptiveAvgPool2d", output_size=4)), *_head(8 * 4 * 4)], [3, 16, 16]
    ),
    "BatchNorm2d": one_network(
        [*_conv(L("BatchNorm2d", num_features=8), L("ReLU")), *_head(8 * 16 * 16)], [3, 16, 16]
    ),
    "BatchNorm1d": _wide(L("BatchNorm1d", num_features=1024), L("ReLU")),
    "Embedding": one_network(
        [
            L("Embedding", num_embeddings=2000, embedding_dim=64),
            L("Flatten"),
            L("Linear", in_features=16 * 64, out_features=10),
        ],
        [16],
        vocab=2000,
    ),
    "LSTM": _recurrent("LSTM"),
    "GRU": _recurrent("GRU", num_layers=2),
    "RNN": _recurrent("RNN"),
    "LastStep": one_network(
        [
            L("Embedding", num_embeddings=500, embedding_dim=32),
            L("RNN", input_size=32, hidden_size=64, batch_first=True, num_layers=2),
            L("LastStep"),
            L("Linear", in_features=64, out_features=10),
        ],
        [24],
        vocab=500,
    ),
    "PoolOverTime": one_network(
        [
            L("Embedding", num_embeddings=500, embedding_dim=32),
            L("CausalConv1d", in_channels=32, out_channels=64, kernel_size=3),
            L("ReLU"),
            L("PoolOverTime", pools=["last", "max"]),
            L("Linear", in_features=128, out_features=10),
        ],
        [24],
        vocab=500,
    ),
    "EmbeddingBag": one_network(
        [
            L("EmbeddingBag", num_embeddings=500, embedding_dim=64, mode="mean"),
            L("Linear", in_features=64, out_features=10),
        ],
        [40],
        vocab=500,
    ),
    "RBM": C.rbm(),
    "Residual": one_network(
        [
            *_conv(
                L(
                    "Residual",
                    body=[L("Conv2d", in_channels=8, out_channels=8, kernel_size=3, padding=1), L("ReLU")],
                    shortcut=[],
                )
            ),
            *_head(8 * 16 * 16),
        ],
        [3, 16, 16],
    ),
    "Concat": one_network(
        [
            *_conv(
                L(
                    "Concat",
                    branches=[
                        [L("Conv2d", in_channels=8, out_channels=4, kernel_size=1)],
                        [L("Conv2d", in_channels=8, out_channels=4, kernel_size=3, padding=1), L("ReLU")],
                    ],
                )
            ),
            *_head(8 * 16 * 16),
        ],
        [3, 16, 16],
    ),
    "CausalConv1d": one_network(
        [
            L("CausalConv1d", in_channels=16, out_channels=32, kernel_size=3, dilation=2),
            L("ReLU"),
            L("CausalConv1d", in_channels=32, out_channels=32, kernel_size=2, dilation=4),
            L("ReLU"),
            L("CausalConv1d", in_channels=32, out_channels=32, kernel_size=1),
            L("LastStep"),
            L("Linear", in_features=32, out_features=10),
        ],
        [48, 16],
    ),
    "Gaussian": one_network(
        [
            L("Linear", in_features=64, out_features=256),
            L("ReLU"),
            L("Linear", in_features=256, out_features=32),
            L("Gaussian", features=32),
            L("Linear", in_features=32, out_features=10),
        ],
        [64],
    ),
    "Adam": one_network(
        [
            L("Linear", in_features=256, out_features=512),
            L("ReLU"),
            L("Linear", in_features=512, out_features=10),
        ],
        [256],
        optimizer="adam",
    ),
}
