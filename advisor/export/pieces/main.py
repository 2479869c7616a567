"""The command line of a downloaded train.py: build, then train on a data file or take
a few steps on random data.

A piece of the code a user downloads (advisor/export/training.py). The four loop
functions imported below come from the candidate's own family loop in train.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import torch
from model import BUILDERS
from torch import nn

from advisor.export.pieces.backprop import (
    check_shapes,
    make_evaluate,
    make_step,
    synthetic_batch,
)
from advisor.export.pieces.data import load_sample, make_split, prepare, read_split
from advisor.export.pieces.fit import fit, smoke
from advisor.export.pieces.setup import Config, init_small, pick_device, set_threads

HERE = Path(__file__).resolve().parent


def parse_args(argv: list[str] | None, config: Config) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--data", type=Path, help="a CSV, NPZ, NPY or image-ZIP file")
    what.add_argument(
        "--synthetic", action="store_true", help="random data of the networks' shapes"
    )
    parser.add_argument(
        "--label-column", default=config.label_column, help="a CSV file's label column"
    )
    parser.add_argument(
        "--split",
        type=Path,
        default=HERE / "split.json",
        help="the examples of each part, by index (default: split.json, if there is"
        " one; else a random split)",
    )
    parser.add_argument("--max-steps", type=int, help="stop after this many updates")
    parser.add_argument("--batch-size", type=int, default=config.batch_size)
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: the plan's)")
    parser.add_argument("--threads", type=int, default=config.threads)
    parser.add_argument("--seed", type=int, default=config.seed)
    parser.add_argument("--save", type=Path, help="write the trained weights here")
    parser.add_argument("--report", type=Path, help="write the results here (JSON)")
    args = parser.parse_args(argv)
    if args.synthetic and not args.max_steps:
        parser.error("--synthetic needs --max-steps")
    return args


def build_networks(config: Config, device: torch.device) -> dict[str, nn.Module]:
    """Each network of model.py, its weights drawn as the set-up says."""
    nets = {}
    for role, build in BUILDERS.items():
        net = build()
        init_small(net, config.init_scale, config.fan_in_cap)
        nets[role] = net.to(device).train()
    return nets


def main(
    config: Config, allocator: dict[str, str], argv: list[str] | None = None
) -> dict[str, object]:
    args = parse_args(argv, config)
    config = dataclasses.replace(config, batch_size=args.batch_size, seed=args.seed)
    device = pick_device(args.device, config)
    set_threads(device, args.threads, allocator)
    torch.manual_seed(config.seed)
    nets = build_networks(config, device)
    check_shapes(nets, config, device)
    step = make_step(nets, config)
    if args.synthetic:
        report = smoke(
            step,
            lambda: synthetic_batch(config, config.batch_size, device),
            args.max_steps,
        )
    else:
        sample = load_sample(args.data, args.label_column)
        examples = len(sample.x)
        classes = sample.y if sample.label_kind == "class" else None
        split = (
            read_split(args.split, examples)
            if args.split.exists()
            else make_split(classes, examples, config)
        )
        data = prepare(sample, split, config, device)
        evaluate = make_evaluate(nets, data, config)
        report = fit(nets, data, config, step, evaluate, args.max_steps)
    if args.save:
        torch.save({role: net.state_dict() for role, net in nets.items()}, args.save)
    if args.report:
        args.report.write_text(json.dumps(report, indent=1))
    return report
