"""`python -m bench profiles`: ways of profiling a device compared on one measured grid.

On a shared machine two runs of `python -m bench predict` drift apart more than two profiling methods differ,
so methods are compared on the same measurements: the profiles are taken back to back, in the order given,
then the grid of `bench predict` (two networks a family, batches 16/64/256, 1 and 2 threads) is measured once
and every profile is scored against it (`bench.predict.compare_profiles`: thread choice within 5%, median
|error|, share within ±20%, profiling seconds). One letter a profile:

  d  points 0.06 s, whole steps 0.3 s (profile version 5 as first committed)
  w  points 0.06 s, whole steps 0.75 s
  l  points 0.15 s, whole steps 0.75 s (today's POINT_SECONDS and WHOLE_STEP_SECONDS)
  n  today's profile_device, as it is
  o  profile_device of another version of advisor/calibration/profile.py (--old-profile FILE), e.g.
     `git show abb9b62:advisor/calibration/profile.py > /tmp/profile_old.py` for the sequential profile

The result (--out FILE.json): {"order", "load", "profiles", "rows", and per profile its scores}, keyed
default/whole/long/new/old. Runs under the harness's tuned allocator (re-executed, as `bench predict`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

# letter -> (key in the result, seconds a point, seconds a whole step); None: the module's own
LENGTHS: dict[str, tuple[str, float | None, float | None]] = {
    "d": ("default", 0.06, 0.3),
    "w": ("whole", 0.06, 0.75),
    "l": ("long", 0.15, 0.75),
    "n": ("new", None, None),
    "o": ("old", None, None),
}


@contextlib.contextmanager
def point_lengths(module: ModuleType, point: float | None, whole: float | None) -> Iterator[None]:
    """The profile module with its points timed for `point` s and its whole steps for `whole` s, restored
    after. The point length is each timing helper's default (bound when the module was loaded), so it is
    set there, as the A/B of the point length did."""
    if point is None or whole is None:
        yield
        return
    timers = timers_of(module)
    saved = module.WHOLE_STEP_SECONDS, [t.__defaults__ for t in timers]
    module.WHOLE_STEP_SECONDS = whole
    timers[0].__defaults__ = (point, 1)  # (budget, repeat)
    timers[1].__defaults__ = (point,)  # (budget,)
    try:
        yield
    finally:
        module.WHOLE_STEP_SECONDS = saved[0]
        for timer, defaults in zip(timers, saved[1], strict=True):
            timer.__defaults__ = defaults


def timers_of(module: ModuleType) -> tuple[Any, Any]:
    """The module's point timer and whole-step timer: its own in an older profile module, those it imports
    from advisor/calibration/points.py in today's."""
    own = getattr(module, "_median_seconds", None), getattr(module, "_harness_step", None)
    if own[0] is not None and own[1] is not None:
        return own
    return module.median_seconds, module.harness_step


def load_module(path: Path) -> ModuleType:
    """A profile module from a file: another version of advisor/calibration/profile.py."""
    spec = importlib.util.spec_from_file_location("profile_old", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def take(order: str, old: Path | None, threads: list[int]) -> dict[str, Any]:
    """The profiles, back to back in `order`, keyed as LENGTHS names them."""
    import advisor.calibration.profile as today

    unknown = sorted(set(order) - set(LENGTHS))
    if unknown or not order:
        raise SystemExit(f"unknown profile(s) {unknown}: give letters of {''.join(LENGTHS)}")
    if "o" in order and old is None:
        raise SystemExit("profile 'o' needs --old-profile FILE")
    profiles: dict[str, Any] = {}
    for letter in order:
        key, point, whole = LENGTHS[letter]
        module = load_module(old) if letter == "o" and old is not None else today
        run: Callable[..., Any] = module.profile_device
        started = time.perf_counter()
        with point_lengths(module, point, whole):
            profiles[key] = run("cpu", threads=threads)
        print(letter, f"{time.perf_counter() - started:.1f} s", os.getloadavg(), flush=True)
    return profiles


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench profiles",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--order", required=True, help="profiles to take, in this order, e.g. dwl or on")
    parser.add_argument("--out", type=Path, required=True, help="the result, a JSON file")
    parser.add_argument("--old-profile", type=Path, default=None, help="the profile module of 'o'")
    parser.add_argument("--threads", default="1,2", help="thread counts profiled and measured")
    parser.add_argument("--allocator", default="tuned", help="tuned (as calibrations run), default, inherit")
    args = parser.parse_args(argv)
    from bench.shi2016 import reexec_with_allocator

    reexec_with_allocator(args.allocator, ["profiles", *argv], bench=None)
    from bench.predict import compare_profiles

    threads = [int(t) for t in args.threads.split(",")]
    profiles = take(args.order, args.old_profile, threads)
    result = {"order": args.order, **compare_profiles(profiles, threads=tuple(threads))}
    for name in profiles:
        print(name, result[name])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result), encoding="utf-8")
    return 0
