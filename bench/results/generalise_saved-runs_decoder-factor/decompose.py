"""Where a decoder's or a generator's step goes on this CPU: each layer alone, each network alone and the
whole step, against the cost model's price of each, on a fresh one-thread profile.

`python bench/results/generalise_saved-runs_decoder-factor/decompose.py [--seed 1] [--networks 8]`
(from the repository root, with the harness's MALLOC_* thresholds): the first networks with a transposed
convolution among bench generalise's configurations of `--seed` (the build seed by default). A layer is
timed as the profile times its points (points.fwd_bwd: forward, `sum().backward()`, median of repeats), its
input needing a gradient where a layer with parameters came before it; "model" is layercost.layer_seconds
(without the step factor). The whole step is measure()'s, "model" there the cost model's with its factor."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import torch  # after the path above

from advisor.calibration import measure
from advisor.calibration.layers import build_layer, build_layers
from advisor.calibration.points import fwd_bwd
from advisor.calibration.profile import profile_device
from advisor.engine.costmodel import factor_of, step_cost, with_current_factor
from advisor.engine.families import roles
from advisor.engine.layercost import layer_seconds, network_seconds, parameter_tensors
from advisor.engine.profile import at_threads
from bench.generalise_specs import configurations

VIEWS = ("Flatten", "Reshape")


def _no_sync() -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--networks", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(1)
    profile = with_current_factor(profile_device("cpu", threads=[1]))
    rates = at_threads(profile, 1)
    drawn = configurations(args.seed, 120).configurations
    picked = [
        c
        for c in drawn
        if any(i["kind"] == "ConvTranspose2d" for layers in c.candidate["networks"].values() for i in layers)
    ][: args.networks]
    print(
        f"profile: step factor {rates['step_factor']:.2f}, "
        f"decoders' factor {factor_of(profile, picked[0].candidate):.2f}"
    )
    for c in picked:
        candidate, batch = c.candidate, c.batch
        whole = measure(candidate, batch_size=batch, threads=1, min_seconds=1.0, max_seconds=4.0, warmup=3)
        measured = float(whole["seconds_per_batch"])
        model = step_cost(candidate, batch_size=batch, threads=1, profile=profile).seconds
        print(
            f"\n{c.name}, batch {batch}: step {measured * 1e3:.2f} ms, "
            f"model {model * 1e3:.2f} ({model / measured:.2f})"
        )
        for network, layers in candidate["networks"].items():
            shape = list(roles.network_input(candidate, network))
            # a decoder's input is the reparameterised code, a discriminator's the generator's images
            grad = network in (roles.DECODER, roles.DISCRIMINATOR)
            alone = fwd_bwd(build_layers(layers), torch.rand(batch, *shape, requires_grad=True), _no_sync, 3)
            _, compute, other = network_seconds(layers, shape, batch, rates, grad)
            lines, total = [], 0.0
            for item in layers:
                params = parameter_tensors([item]) > 0
                out, lc, lo = layer_seconds(item, shape, batch, rates, grad)
                x = torch.rand(batch, *shape, requires_grad=grad or not params)
                seconds = fwd_bwd(build_layer(item), x, _no_sync, 3)
                total += seconds
                if item["kind"] not in VIEWS:
                    price = lc + lo
                    lines.append(
                        f"    {item['kind']:16s} {shape!s:16s} {seconds * 1e3:8.3f} ms, model "
                        f"{price * 1e3:8.3f} ({price / seconds:.2f})"
                    )
                grad, shape = grad or params, list(out)
            price = compute + other
            print(
                f"  {network}: alone {alone * 1e3:.2f} ms, model {price * 1e3:.2f} ({price / alone:.2f}); "
                f"its layers alone sum to {total * 1e3:.2f} ms (alone / sum {alone / total:.2f})"
            )
            print("\n".join(lines))


if __name__ == "__main__":
    main()
