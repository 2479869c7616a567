"""Every estimate's 90% interval: each time it gives times the 5th and 95th percentiles of measured /
estimated over its basis's validation (`estimate.interval`, docs/CONTRACT.md).

The factors are data, here in one place, each with the results it comes from; `python -m bench predict
--from ...` reports them (`ratio_q05`, `ratio_q95` in its result.json) so that a better model's held-out
evaluation can replace them. "predicted" has none here: a device's learned correction carries its own, from
its cross-validated ratios (engine.learned.Validation).
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor.contract import Estimate, Interval
from advisor.engine.units import ratio_interval_text

Ratios = tuple[float, float]  # measured / estimated: (5th percentile, 95th percentile)

# (basis, plan device "cpu" | "gpu") -> ratios
RATIOS: dict[tuple[str, str], Ratios] = {
    # The profile (a device's median of trusted profiles, as a worker keeps it) on generated specs: the quiet
    # rows of all seven saved runs on the 2-core AMD EPYC VM, build and spent evaluation seeds, 888 rows at
    # 1 and 2 threads, scored by today's model. A run's level moves with its profiles by up to ±15%, so the
    # band is taken over runs, not from one: bench/results/generalise_amd-epyc-2c_evaluation-4-quiet/README.md
    ("profiled", "cpu"): (0.74, 1.48),
    # An H100's profile, 180 rows of three runs:
    # bench/results/predict_h100-80gb-hbm3_run1-3_intervals
    ("profiled", "gpu"): (0.50, 1.59),
    # A measurement predicting a later one: one run of each configuration against the mean of the two
    # others, same results' "floor" (quiet CPU: 360; H100: 180)
    ("measured", "cpu"): (0.69, 1.52),
    ("measured", "gpu"): (0.71, 1.37),
    # The catalog's peaks: on this project's CPU 0.32x to 2.4x of measured (issue 12, estimate.py); on GPUs
    # against Shi et al.'s best tool per cell, 18 cells (`catalog_vs_shi` in any bench predict result.json,
    # e.g. bench/results/predict_amd-epyc-2c_final/final1)
    ("catalog", "cpu"): (0.42, 3.1),
    ("catalog", "gpu"): (0.66, 1.47),
}
# A CPU profile merged from several (engine.profile.merge): the interval spans the lowest and highest of the
# estimate and each member's own estimate, times these. Fitted on the same AMD runs' 2,139 quiet rows (the
# estimate and each of the run's three profiles); each run left out in turn gave 0.89-0.90 and 1.28-1.31,
# covering 78-96% of its rows (median width 1.87 pooled, against 2.00 for the band above), and 62% of the
# Intel Xeon's held-out rows where the band above covered 40%: there two of three profiles priced every
# family 20-90% slow, one was close (bench/results/generalise_intel-xeon-2c_evaluation-10/README.md)
SPAN_RATIOS: dict[str, Ratios] = {"cpu": (0.90, 1.30)}
# ... and never narrower than these times the estimate itself: where the members agree (within 8% on the AMD
# VM's seed 24016, 17% on the Intel VM's 24017) the span alone is the profiles' spread, not the model's own
# error, and covered 83-84% there. Fitted on the 3,043 quiet rows of all twenty saved runs of three or five
# profiles (both VMs): 89.9% covered at a median width of 1.92; each run scored with the factors fitted on
# the others, 15 of 20 runs within 85-95% against 9 with the span alone
# (bench/results/generalise_saved-runs_interval-floor/README.md)
SPAN_FLOOR: dict[str, Ratios] = {"cpu": (0.89, 1.56)}
TIMES = ("seconds_per_batch", "seconds_per_epoch", "seconds_to_train")


def ratios_for(basis: str, device: str) -> Ratios:
    """The factors of a basis on a plan's device ("cpu", "gpu"; a profile's "cuda" reads as "gpu")."""
    kind = "cpu" if device == "cpu" else "gpu"
    return RATIOS[(basis, kind)]


def profiled_ratios(estimate: float, each: Sequence[float], device: str) -> Ratios:
    """A profiled estimate's factors, given each member profile's own estimate of the same step (`each`;
    empty where the device's profile is a single one): where there are two or more, the interval reaches
    from the lowest of them and the estimate to the highest (SPAN_RATIOS), and at least SPAN_FLOOR's
    factors of the estimate; else the basis's band."""
    kind = "cpu" if device == "cpu" else "gpu"
    if len(each) < 2 or kind not in SPAN_RATIOS or estimate <= 0:
        return ratios_for("profiled", device)
    low, high = SPAN_RATIOS[kind]
    floor_low, floor_high = SPAN_FLOOR[kind]
    spanned = low * min(estimate, *each) / estimate, high * max(estimate, *each) / estimate
    return min(floor_low, spanned[0]), max(floor_high, spanned[1])


def interval(estimate: Estimate, ratios: Ratios) -> Interval:
    low, high = ratios
    return {
        "seconds_per_batch": [
            low * float(estimate["seconds_per_batch"]),
            high * float(estimate["seconds_per_batch"]),
        ],
        "seconds_per_epoch": [
            low * float(estimate["seconds_per_epoch"]),
            high * float(estimate["seconds_per_epoch"]),
        ],
        "seconds_to_train": [
            low * float(estimate["seconds_to_train"]),
            high * float(estimate["seconds_to_train"]),
        ],
    }


def ratios_of(estimate: Estimate) -> Ratios | None:
    """The factors an estimate's interval was made with (None where it has none)."""
    found = estimate.get("interval")
    per_batch = float(estimate.get("seconds_per_batch") or 0.0)
    if not found or per_batch <= 0:
        return None
    low, high = found["seconds_per_batch"]
    return float(low) / per_batch, float(high) / per_batch


def with_interval(estimate: Estimate, device: str) -> Estimate:
    """The estimate with its interval: kept (re-scaled to its times, which a measured scaling may have
    changed) where it had one, else from its basis on the plan's `device` (estimates stored before)."""
    ratios = ratios_of(estimate) or ratios_for(str(estimate.get("basis", "catalog")), device)
    return {**estimate, "interval": interval(estimate, ratios)}


def ratio_text(ratios: Ratios) -> str:
    """How a 90% interval reads beside a figure: "x0.60 to x1.9"."""
    return ratio_interval_text(ratios[0], ratios[1])
