"""Published networks (W §III-D, last paragraph), with their real layer lists, as torchvision defines them.

- AlexNet: torchvision's 64-192-384-256-256 layout (Krizhevsky et al. 2012, one-GPU variant per Krizhevsky
  2014); 61,100,840 parameters at 1000 classes.
- ResNet-50: He et al. 2015, bottleneck blocks [3, 4, 6, 3], stride on the 3x3 convolution (torchvision
  "v1.5"); 25,557,032 parameters at 1000 classes. Blocks use the `Residual` kind (see docs/CANDIDATE.md).
- GoogLeNet: Szegedy et al. 2015 as torchvision builds it (batch-norm convolutions, 3x3 in the "5x5" branch,
  no auxiliary classifiers); 6,624,904 parameters at 1000 classes. Inceptions use the `Concat` kind.
The last Linear maps to the task's number of classes.
"""

from __future__ import annotations

from advisor.contract import Layer, LayerArgs, TaskSpec
from advisor.engine.candidate import Draft, io_dict
from advisor.engine.families import CNN
from advisor.engine.families.roles import MODEL
from advisor.engine.layers import layer
from advisor.engine.rules import reason

# ImageNet top-1 accuracy of torchvision's weights (torchvision.models documentation, "acc@1")
TOP1 = {"alexnet": 0.56522, "googlenet": 0.69778, "resnet-50": 0.76130}


def _conv(c_in: int, c_out: int, k: int, stride: int = 1, padding: int = 0, eps: float = 1e-5) -> list[Layer]:
    """Conv (no bias) -> BatchNorm -> ReLU, the unit ResNet and torchvision's GoogLeNet are made of."""
    bn: LayerArgs = {"num_features": c_out} if eps == 1e-5 else {"num_features": c_out, "eps": eps}
    return [
        layer(
            "Conv2d",
            in_channels=c_in,
            out_channels=c_out,
            kernel_size=k,
            stride=stride,
            padding=padding,
            bias=False,
        ),
        {"kind": "BatchNorm2d", "args": bn},
        layer("ReLU"),
    ]


def alexnet(outputs: int) -> tuple[list[Layer], list[int]]:
    channels = [64, 192, 384, 256, 256]
    model = [
        layer("Conv2d", in_channels=3, out_channels=64, kernel_size=11, stride=4, padding=2),
        layer("ReLU"),
        layer("MaxPool2d", kernel_size=3, stride=2),
        layer("Conv2d", in_channels=64, out_channels=192, kernel_size=5, padding=2),
        layer("ReLU"),
        layer("MaxPool2d", kernel_size=3, stride=2),
        layer("Conv2d", in_channels=192, out_channels=384, kernel_size=3, padding=1),
        layer("ReLU"),
        layer("Conv2d", in_channels=384, out_channels=256, kernel_size=3, padding=1),
        layer("ReLU"),
        layer("Conv2d", in_channels=256, out_channels=256, kernel_size=3, padding=1),
        layer("ReLU"),
        layer("MaxPool2d", kernel_size=3, stride=2),
        layer("AdaptiveAvgPool2d", output_size=[6, 6]),
        layer("Flatten"),
        layer("Dropout", p=0.5),
        layer("Linear", in_features=256 * 6 * 6, out_features=4096),
        layer("ReLU"),
        layer("Dropout", p=0.5),
        layer("Linear", in_features=4096, out_features=4096),
        layer("ReLU"),
        layer("Linear", in_features=4096, out_features=outputs),
    ]
    return model, [*channels, 4096, 4096]


def _bottleneck(c_in: int, width: int, stride: int) -> list[Layer]:
    """He et al.'s bottleneck: ReLU(body(x) + shortcut(x)), the sum as a `Residual`, then an explicit ReLU."""
    out = 4 * width
    body = [
        *_conv(c_in, width, 1),
        *_conv(width, width, 3, stride, 1),
        layer("Conv2d", in_channels=width, out_channels=out, kernel_size=1, bias=False),
        layer("BatchNorm2d", num_features=out),
    ]
    shortcut: list[Layer] = []
    if stride != 1 or c_in != out:
        shortcut = [
            layer("Conv2d", in_channels=c_in, out_channels=out, kernel_size=1, stride=stride, bias=False),
            layer("BatchNorm2d", num_features=out),
        ]
    return [layer("Residual", body=body, shortcut=shortcut), layer("ReLU")]


def resnet50(outputs: int) -> tuple[list[Layer], list[int]]:
    model: list[Layer] = [*_conv(3, 64, 7, 2, 3), layer("MaxPool2d", kernel_size=3, stride=2, padding=1)]
    c_in = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for block in range(blocks):
            model += _bottleneck(c_in, width, stride if block == 0 else 1)
            c_in = 4 * width
    model += [
        layer("AdaptiveAvgPool2d", output_size=[1, 1]),
        layer("Flatten"),
        layer("Linear", in_features=2048, out_features=outputs),
    ]
    return model, [64, 256, 512, 1024, 2048]


_INCEPTIONS = {
    "3a": (192, 64, 96, 128, 16, 32, 32),
    "3b": (256, 128, 128, 192, 32, 96, 64),
    "4a": (480, 192, 96, 208, 16, 48, 64),
    "4b": (512, 160, 112, 224, 24, 64, 64),
    "4c": (512, 128, 128, 256, 24, 64, 64),
    "4d": (512, 112, 144, 288, 32, 64, 64),
    "4e": (528, 256, 160, 320, 32, 128, 128),
    "5a": (832, 256, 160, 320, 32, 128, 128),
    "5b": (832, 384, 192, 384, 48, 128, 128),
}


def _inception(c_in: int, c1: int, r3: int, c3: int, r5: int, c5: int, pool: int) -> Layer:
    e = 1e-3  # torchvision's BasicConv2d
    return layer(
        "Concat",
        branches=[
            _conv(c_in, c1, 1, eps=e),
            [*_conv(c_in, r3, 1, eps=e), *_conv(r3, c3, 3, padding=1, eps=e)],
            [*_conv(c_in, r5, 1, eps=e), *_conv(r5, c5, 3, padding=1, eps=e)],
            [
                layer("MaxPool2d", kernel_size=3, stride=1, padding=1, ceil_mode=True),
                *_conv(c_in, pool, 1, eps=e),
            ],
        ],
    )


def googlenet(outputs: int) -> tuple[list[Layer], list[int]]:
    e = 1e-3
    pool = layer("MaxPool2d", kernel_size=3, stride=2, ceil_mode=True)
    model: list[Layer] = [
        *_conv(3, 64, 7, 2, 3, eps=e),
        pool,
        *_conv(64, 64, 1, eps=e),
        *_conv(64, 192, 3, padding=1, eps=e),
        pool,
        _inception(*_INCEPTIONS["3a"]),
        _inception(*_INCEPTIONS["3b"]),
        pool,
        *[_inception(*_INCEPTIONS[name]) for name in ("4a", "4b", "4c", "4d", "4e")],
        layer("MaxPool2d", kernel_size=2, stride=2, ceil_mode=True),
        _inception(*_INCEPTIONS["5a"]),
        _inception(*_INCEPTIONS["5b"]),
        layer("AdaptiveAvgPool2d", output_size=[1, 1]),
        layer("Flatten"),
        layer("Dropout", p=0.2),
        layer("Linear", in_features=1024, out_features=outputs),
    ]
    return model, [64, 192, 256, 480, 512, 528, 832, 1024]


BUILDERS = {"alexnet": alexnet, "googlenet": googlenet, "resnet-50": resnet50}
NAMES = {"alexnet": "AlexNet", "googlenet": "GoogLeNet", "resnet-50": "ResNet-50"}


def published(name: str, spec: TaskSpec) -> Draft:
    shape = spec["data"]["input_shape"]
    outputs = spec["data"]["outputs"]
    if outputs is None:  # choice.py offers them to classification only, which names its classes
        raise ValueError("a published network needs data.outputs")
    model, sizes = BUILDERS[name](outputs)
    text = (
        f"{NAMES[name]} ({TOP1[name]:.1%} top-1 on ImageNet with torchvision's weights), its last layer "
        f"sized to your {outputs:,} classes."
    )
    return Draft(
        CNN.key,
        "deep",
        {MODEL: model},
        sizes,
        io_dict(shape, "class", outputs),
        "cross_entropy",
        [reason("net.published", text)],
        name,
    )
