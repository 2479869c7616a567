"""The probe's verdict: what the numbers say about shallow versus deep, in one sentence and in fields.

Rules cited (engine/rules.json): net.shallow.first (W §III-A): a shallow network first, a deep one only
if the result misses the acceptable error rate; net.shallow.validate (W §III-A-1): shallow networks need
careful validation, they risk overfitting.
"""

from __future__ import annotations

import math
from typing import Any

from advisor.contract import Verdict
from advisor.engine.units import DASH, count, percent

METRIC_WORDS = {"r2": "R²", "explained_variance": "of the input's variance explained"}
OVERFIT_GAP = 0.1  # training score this far above the held-out score is called overfitting


def reason(rule: str, text: str) -> dict[str, str]:
    source = {"net.shallow.first": "W §III-A", "net.shallow.validate": "W §III-A-1"}[rule]
    return {"rule": rule, "text": text, "source": source}


def train_score(run: dict[str, Any] | None) -> float | None:
    """The training split's score at the best epoch: the median over the splits where repeated."""
    if not run:
        return None
    spread = run.get("train_spread")
    return float(spread["median"]) if spread else run.get("train_score")


def _name(run: dict[str, Any]) -> str:
    return str(run.get("family") or "network").upper()


def score_text(value: float, target: float | None = None) -> str:
    """Two decimals, more where two would round a miss up to the target: 0.967 against 0.97 reads 0.967,
    never 0.97. A miss is never printed as the target."""
    for digits in (2, 3, 4):
        text = f"{value:.{digits}f}"
        if target is None or value >= target or float(text) < target:
            return text
    return f"{math.floor(value * 1e4) / 1e4:.4f}"


def target_text(target: float) -> str:
    """Two decimals, or as many as the user gave (0.975 stays 0.975, never 0.97)."""
    text = f"{target:.2f}"
    return text if float(text) == target else f"{target:g}"


def reported(run: dict[str, Any] | None) -> float | None:
    """The score a run (or the baseline) reports: the median of its splits where the probe repeated its split
    (`spread`), else its one split's held-out score."""
    if not run:
        return None
    spread = run.get("spread")
    return float(spread["median"]) if spread else run.get("score")


def spread_text(run: dict[str, Any] | None) -> str:
    """ " (median of 3 splits, 0.961-0.975)" where the run was repeated, else nothing."""
    spread = (run or {}).get("spread")
    if not spread:
        return ""
    return f" (median of {spread['splits']} splits, {spread['low']:.3f}{DASH}{spread['high']:.3f})"


def _meets(run: dict[str, Any] | None, target: float | None) -> bool:
    score = reported(run)
    return bool(target is not None and score is not None and score >= target)


def choose(shallow: dict[str, Any] | None, deep: dict[str, Any] | None, target: float | None) -> str | None:
    """Which run the curve and the estimate follow: the shallow one if it suffices, else the deep one if it
    does, else the better of the two."""
    runs = {k: r for k, r in (("shallow", shallow), ("deep", deep)) if reported(r) is not None}
    if not runs:
        return None
    if _meets(shallow, target):
        return "shallow"
    if _meets(deep, target):
        return "deep"
    return max(runs, key=lambda k: float(reported(runs[k]) or 0))


def interval_words(expected: dict[str, Any]) -> str:
    """The expected score at full size with its interval, as the verdict and the probe page both write it:
    "0.964, 90% interval 0.944-0.987" (an en dash). Three decimals: a "± 0.02" rounded from a lopsided
    interval disagreed with the interval the page showed beside it."""
    est, low, high = expected["estimate"], expected["low"], expected["high"]
    return f"{est:.3f}, {percent(expected.get('interval', 0.9))} interval {low:.3f}{DASH}{high:.3f}"


def expected_text(expected: dict[str, Any] | None) -> str:
    """ "; expected at full size (48,000 examples) 0.964, 90% interval 0.944-0.987"."""
    if not expected or expected.get("estimate") is None or expected.get("method") == "measured":
        return ""
    return f"; expected at full size ({count(expected['examples'])} examples) {interval_words(expected)}"


def verdict(
    *,
    metric: str,
    target: float | None,
    baseline: dict[str, Any] | None,
    shallow: dict[str, Any] | None,
    deep: dict[str, Any] | None,
    deep_note: str | None,
    shallow_note: str | None = None,
    expected: dict[str, Any] | None,
) -> Verdict:
    chosen = choose(shallow, deep, target)
    notes: list[str] = []
    reasons = [
        reason(
            "net.shallow.first",
            "A shallow network is trained first because it trains fast; a deep one only if the shallow one "
            "misses the accuracy target.",
        ),
        reason(
            "net.shallow.validate",
            "Scores are measured on a held-out test split that neither training nor the choice of epoch saw "
            "(stratified train/validation/test split).",
        ),
    ]
    t = target_text(target) if target is not None else ""

    def f(value: float) -> str:
        return score_text(value, target)

    sh, dp = reported(shallow), reported(deep)
    shallow_name = _name(shallow or {})
    deep_name = _name(deep or {})
    # Accuracy is what a target usually means; other goals' scores say what they are the first time.
    unit = "" if metric == "accuracy" else f" {METRIC_WORDS.get(metric, metric)}"
    sh_unit, dp_unit = unit + spread_text(shallow), unit + spread_text(deep)
    exp_text = expected_text(expected)
    deep_needed: bool | None = None
    if sh is None and dp is not None:
        met = "" if target is None else f" (target {t})" if dp >= target else f", below the target {t},"
        text = (
            f"no shallow network was tried ({shallow_note or 'none trained'}); "
            f"{deep_name} scores {f(dp)}{dp_unit}{met} on the sample{exp_text}"
        )
    elif sh is None:
        text = f"no network could be trained on the sample ({shallow_note or deep_note or 'no candidate'})"
    elif target is None:
        text = f"shallow {shallow_name} reaches {f(sh)}{sh_unit}; no accuracy target, deep not tried"
        text += exp_text
    elif sh >= target:
        text = f"shallow {shallow_name} reaches {f(sh)}{sh_unit} (target {t}) — deep not needed{exp_text}"
        deep_needed = False
    elif dp is None:
        deep_needed = True
        why = deep_note or "no deep network trained"
        text = f"shallow {shallow_name} scores {f(sh)}{sh_unit}, below the target {t}; {why}"
    elif dp >= target:
        deep_needed = True
        both = f"shallow scores {f(sh)}{sh_unit}, below the target; {deep_name} reaches {f(dp)}{dp_unit}"
        text = f"{both} on the sample (target {t}){exp_text}"
    else:
        deep_needed = True
        both = f"shallow {f(sh)}{sh_unit}, {deep_name} {f(dp)}{dp_unit}"
        text = f"neither reaches the target {t} on the sample: {both}{exp_text}"
        if expected and expected.get("estimate") is not None and expected["estimate"] >= target:
            notes.append("The learning curve suggests the full data set may close the gap.")
    for label, run in (("shallow", shallow), ("deep", deep)):
        trained, held = train_score(run), reported(run)
        if run and trained is not None and held is not None:
            gap = trained - held
            if gap > OVERFIT_GAP:
                notes.append(
                    f"The {label} {_name(run)} scores {f(trained)} on its training split but "
                    f"{f(held)} held out: it overfits the sample."
                )
    best = max((s for s in (sh, dp) if s is not None), default=None)
    base = reported(baseline)
    if baseline and best is not None and base is not None and base >= best:
        notes.append(
            f"The classical baseline ({baseline['model']}) scores {f(base)}{spread_text(baseline)}, as well "
            "as any network tried: the task may not need a neural network."
        )
    return {
        "text": text,
        "metric": metric,
        "target": target,
        "chosen": chosen,
        "deep_needed": deep_needed,
        # did the network the verdict follows reach the target on held-out data (None: no target or no run)
        "met": None
        if target is None or chosen is None
        else _meets({"shallow": shallow, "deep": deep}[chosen], target),
        "shallow_score": sh,
        "deep_score": dp,
        "baseline_score": base,
        "baseline_model": baseline.get("model") if baseline else None,
        # the median and range of each over the probe's repeated splits (paired: the same splits for all)
        "spread": {
            k: r["spread"]
            for k, r in (("shallow", shallow), ("deep", deep), ("baseline", baseline))
            if r and r.get("spread")
        },
        "expected": expected,
        "notes": notes,
        "reasons": reasons,
    }
