"""`python -m bench <name> [...]`: each benchmark is a module of this package with `main(argv) -> int`."""

from __future__ import annotations

import importlib
import sys

# name -> (module, one-line description); a module is imported only when its benchmark runs,
# so `python -m bench engine` never pays for importing torch.
BENCHMARKS: dict[str, tuple[str, str]] = {
    "shi2016": ("bench.shi2016", "reproduce Shi et al. 2016 Table 4 on this machine"),
    "engine": ("bench.engine_latency", "recommend() latency over a varied set of specs"),
    "harness": ("bench.harness", "measure() overhead and agreement with torch.utils.benchmark"),
    "epoch": ("bench.epoch", "predicted vs actual time of one training epoch"),
    "predict": ("bench.predict", "time model (profile, learned correction, catalog) against measured steps"),
    "generalise": ("bench.generalise", "the profiled estimate on generated specs it was not built on"),
    "curves": ("bench.curves", "held-out layers of each kind against the profile curve the model reads"),
    "profiles": ("bench.profiles", "ways of profiling a device compared on one measured grid"),
    "learned": (
        "bench.learned",
        "the gated learned correction after 4, 8, 16 calibrations against the profile",
    ),
    "queue": ("bench.queue", "calibration round trip through a real worker, pick-up included"),
    "api": ("bench.api_load", "POST recommendations throughput and p95 under gunicorn"),
    "pages": ("bench.pages", "server-side render time of the main pages"),
    "scaling": ("bench.scaling", "data-parallel training (DDP) at each world size against W §III-H"),
    "memory": ("bench.memory", "estimated training memory against the live-tensor peak and RSS growth"),
    "cuda": ("bench.cuda", "every CUDA path once: profile, events, allocator, OOM, refill, NCCL"),
    "advice": ("bench.advice", "advised first candidate vs a tuned search and scikit-learn, time to target"),
    "probe": (
        "bench.probe",
        "digits through the product's probe: median of its splits, 10 paired splits vs baseline",
    ),
    "chain": ("bench.chain", "the probe's next-step chain against an Optuna TPE search of the same space"),
    "export": ("bench.export", "a probe's downloaded train.py against the probe's own score, same split"),
    "noisy": ("bench.noisy", "measure() quiet, under a competing load, quiet again: ±10% or unreliable"),
    "explore": (
        "bench.explore",
        "advice's explorations: generator set-ups, widths, per-batch steps, the generation probe's scale",
    ),
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"} or argv[0] not in BENCHMARKS:
        print("usage: python -m bench <benchmark> [options]\n")
        for name, (_, text) in BENCHMARKS.items():
            print(f"  {name:<10} {text}")
        return 0 if argv and argv[0] in {"-h", "--help"} else 2
    module = importlib.import_module(BENCHMARKS[argv[0]][0])
    if "torch" in sys.modules:  # a benchmark that times training: as the harness's children time it
        from advisor.calibration.floats import flush_denormals

        flush_denormals()  # before its first operator (importing runs none)
    return int(module.main(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
