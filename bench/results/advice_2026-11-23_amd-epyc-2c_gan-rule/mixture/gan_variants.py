"""Ad hoc (kept to rerun gan_variants.log): the engine's first generation candidate with cited fields
overridden, on the mixture task. Written against main at abb9b62, where the GAN's rate was 2e-4: on a later
engine `base` is whatever the engine then recommends. Run from the repository root:
PYTHONPATH=. OMP_NUM_THREADS=1 python bench/results/.../gan_variants.py base,b05 0,1,2"""

from __future__ import annotations

import copy
import json
import os
import sys
import time

import torch

from advisor.engine import recommend
from bench import advice_gen
from bench.advice import dataset

LOG = "gan_variants.log"  # appended to, in the working directory


def lin(i, o):
    return {"kind": "Linear", "args": {"in_features": i, "out_features": o}}


RELU = {"kind": "ReLU", "args": {}}


def variant(name: str, first: dict) -> dict:
    c = copy.deepcopy(first)
    t, io, nets = c["training"], c["io"], c["networks"]
    if name == "base":
        pass
    elif name == "b05":  # DCGAN §4: beta1 0.5
        t["betas"] = (0.5, 0.999)
    elif name == "b05_z100":  # + DCGAN's 100-dimensional noise
        t["betas"] = (0.5, 0.999)
        io["latent_size"] = 100
        nets["generator"][0]["args"]["in_features"] = 100
    elif name == "lr1e-3":  # Kingma & Ba 2015 §2 default, the engine's rule for other backprop networks
        t["learning_rate"] = 1e-3
    elif name == "lr1e-3_b05":  # + DCGAN §4 beta1 0.5
        t["learning_rate"] = 1e-3
        t["betas"] = (0.5, 0.999)
    elif name.startswith("metz"):
        # Metz et al. 2017 App. A (as in the co-author's notebook): G 2x128 ReLU, D 1x128 ReLU, z 256,
        # Adam 1e-4 beta1 0.5
        io["latent_size"] = 256
        nets["generator"] = [lin(256, 128), RELU, lin(128, 128), RELU, lin(128, 2)]
        nets["discriminator"] = [lin(2, 128), RELU, lin(128, 1)]
        t["learning_rate"] = 1e-4
        t["betas"] = (0.5, 0.999)
        if name == "metz_b512":
            t["batch_size"] = 512
        if name == "metz_nets_dcgan_opt":  # Metz's networks, DCGAN §4's Adam 2e-4 beta1 0.5
            t["learning_rate"] = 2e-4
        if name == "metz_nets_kb_opt":  # Metz's networks, Kingma & Ba's Adam 1e-3 (beta1 0.9)
            t["learning_rate"] = 1e-3
            del t["betas"]
    else:
        raise SystemExit(f"unknown variant {name}")
    return c


def main() -> None:
    torch.set_num_threads(1)
    names, seeds = sys.argv[1].split(","), [int(s) for s in sys.argv[2].split(",")]
    _, spec, _ = dataset("mixture", 0)
    first = recommend(spec)["candidates"][0]
    for name in names:
        for seed in seeds:
            c = variant(name, first)
            started = time.monotonic()
            out = advice_gen.evaluate(c, spec["data"]["examples"], seed)
            a = out["advised"]
            row = {
                "variant": name,
                "seed": seed,
                "score": round(a["score"], 4),
                "modes": a["modes_covered"],
                "high_quality": round(a["high_quality"], 4),
                "gan_seconds": round(a["seconds"], 1),
                "wall_seconds": round(time.monotonic() - started, 1),
                "best_epoch": a["best_epoch"],
                "epochs": a["epochs"],
                "training": {k: c["training"][k] for k in c["training"]},
                "latent": c["io"]["latent_size"],
                "load": os.getloadavg(),
            }
            print(json.dumps(row), flush=True)
            with open(LOG, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
