"""A device profile made from a simple rule (fixed cost plus work at a rate) for tests that need plain
profile data without measuring: on 2 threads each operation costs more to start and runs twice as fast, so
small networks are fastest on 1 thread and large ones on 2, as measured on this project's 2-core VM."""

from __future__ import annotations

from copy import deepcopy

from advisor.engine.profile import PROFILE_VERSION, DeviceProfile, ThreadProfile


def _curve(points: list[float], overhead: float, rate: float) -> list[list[float]]:
    return [[w, overhead + w / rate] for w in points]


def _at(threads: int) -> ThreadProfile:
    start = 5e-6 * (1 + 3 * (threads - 1))  # starting a parallel region costs more than it shares
    flops = 20e9 * threads
    products = [3e4, 5e5, 4e6, 7e7, 5e8]
    return {
        "linear": _curve(products, start, flops / 3),
        "conv": _curve(products, 2 * start, flops / 4),
        "recurrent": _curve([4e5, 2e6, 8e6, 7e7], 4 * start, flops / 6),
        "rnn": _curve([1e5, 5e5, 2e6, 2e7], 2 * start, flops / 6),
        "elementwise": _curve([1e3, 3e4, 3e5, 3e6], start, 1e9 * threads),
        "optimizer": {
            "sgd": _curve([1e3, 3e4, 3e5, 3e6], 20e-6, 1e9 * threads),
            "adam": _curve([1e3, 3e4, 3e5, 3e6], 60e-6, 3e8 * threads),
        },
        "optimizer_tensor_seconds": {"sgd": 5e-6, "adam": 20e-6},
        "step_seconds": 60e-6,
        "flops": flops,
        "bandwidth": 16e9 * threads,
    }


def synthetic_profile(threads: int = 2, kind: str = "cpu") -> DeviceProfile:
    return {
        "version": PROFILE_VERSION,
        "kind": kind,
        "processor": "Test CPU" if kind == "cpu" else "Test GPU",
        "torch": "0.0-test",
        "threads": {str(t): _at(t) for t in range(1, threads + 1)},
        "copy_bandwidth": None,
        "allocator": "tuned",
        "profiled_at": "2026-11-22T00:00:00+00:00",
        "seconds": 1.0,
    }


def scaled(profile: DeviceProfile, factor: float, *, threads: tuple[str, ...] = ()) -> DeviceProfile:
    """A copy of `profile` with its layer curves' seconds times `factor`, at every thread count or those in
    `threads`."""
    copy = deepcopy(profile)

    def times(curve: list[list[float]]) -> list[list[float]]:
        return [[w, s * factor] for w, s in curve]

    for count, rates in copy["threads"].items():
        if threads and count not in threads:
            continue
        rates["linear"], rates["conv"] = times(rates["linear"]), times(rates["conv"])
        rates["recurrent"], rates["rnn"] = times(rates["recurrent"]), times(rates["rnn"])
        rates["elementwise"] = times(rates["elementwise"])
    return copy
