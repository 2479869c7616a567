"""Two explanations of the decoders' shortfall, timed on this CPU: (1) the profile's points are timed with
`out.sum().backward()`, a stride-0 gradient, where a network's layers get dense ones; (2) Tanh and Sigmoid are
priced as a ReLU (layers.KINDS: one pass of the element-wise curve each).

`python bench/results/generalise_saved-runs_decoder-factor/ruled_out.py [--threads 1]` (from the repository
root, with the harness's MALLOC_* thresholds). Medians of three rounds of points.median_seconds."""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import torch  # after the path above
from torch import nn

from advisor.calibration.points import median_seconds

LAYERS: list[tuple[str, nn.Module, tuple[int, ...]]] = [
    ("Linear 64 x 16 -> 16384", nn.Linear(16, 16384), (64, 16)),
    ("Linear 64 x 100 -> 16384", nn.Linear(100, 16384), (64, 100)),
    ("Linear 64 x 1600 -> 2048", nn.Linear(1600, 2048), (64, 1600)),
    ("Linear 256 x 1024 -> 1024", nn.Linear(1024, 1024), (256, 1024)),
    ("ConvTranspose2d 64 -> 32, 4x4 s2, 21x21", nn.ConvTranspose2d(64, 32, 4, 2, 1), (32, 64, 21, 21)),
    ("ConvTranspose2d 32 -> 3, 3x3, 42x42", nn.ConvTranspose2d(32, 3, 3, 1, 1), (32, 32, 42, 42)),
    ("ConvTranspose2d 40 -> 1, 3x3, 41x41", nn.ConvTranspose2d(40, 1, 3, 1, 1), (16, 40, 41, 41)),
    ("Conv2d 32 -> 64, 3x3, 21x21", nn.Conv2d(32, 64, 3, 1, 1), (32, 32, 21, 21)),
    ("ReLU, 1 M values", nn.ReLU(), (1_000_000,)),
]
ACTIVATIONS = {"ReLU": nn.ReLU(), "Sigmoid": nn.Sigmoid(), "Tanh": nn.Tanh(), "LeakyReLU": nn.LeakyReLU(0.2)}


def _no_sync() -> None:
    return None


def _median(run: Callable[[], None], repeat: int) -> float:
    return statistics.median(median_seconds(run, _no_sync, repeat=repeat) for _ in range(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"(1) dense gradient / sum().backward(), {args.threads} thread(s)")
    for name, module, shape in LAYERS:
        x = torch.rand(*shape, requires_grad=True)
        g = torch.rand_like(module(x))
        summed = _median(lambda m=module, x=x: m(x).sum().backward(), 3)
        dense = _median(lambda m=module, x=x, g=g: m(x).backward(g), 3)
        print(f"  {name:40s} {summed * 1e3:8.3f} ms against {dense * 1e3:8.3f} ms: {dense / summed:.2f}")
    print(f"\n(2) activations' forward + backward against a ReLU's, {args.threads} thread(s)")
    for n in (4_000, 30_000, 300_000, 3_000_000):
        x = torch.rand(n, requires_grad=True)
        each = {
            k: _median(lambda m=m, x=x: m(x).sum().backward(), 20 if n < 100_000 else 3)
            for k, m in ACTIVATIONS.items()
        }
        ratios = ", ".join(f"{k} {v / each['ReLU']:.2f}" for k, v in each.items() if k != "ReLU")
        print(f"  {n:>9,} values: ReLU {each['ReLU'] * 1e6:.1f} us; {ratios}")


if __name__ == "__main__":
    main()
