"""The verdict step (pipeline.py, step 7): what the numbers say, in one sentence and in fields. The
supervised probe's (`verdict`, and `conclude` with the time to the target and the notes on the time limit):
shallow versus deep; the generation probe's (`generation_verdict`): the generator's two-sample score
against the target, beside the classical baseline's. No torch here: the pages read its words.

Rules cited (engine/rules.json): net.shallow.first (W §III-A): a shallow network first, a deep one only
if the result misses the acceptable error rate; net.shallow.validate (W §III-A-1): shallow networks need
careful validation, they risk overfitting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from advisor.contract import GenerationVerdict, Verdict
from advisor.engine.units import DASH, count, percent
from advisor.probe.learning.baseline import Baseline, MixtureBaseline
from advisor.probe.learning.curve import CurveFit
from advisor.probe.learning.plan import ProbePlan
from advisor.probe.learning.reach import time_to_target
from advisor.probe.learning.split import Reported, ScoredRun, reported, train_score

if TYPE_CHECKING:
    from advisor.probe.learning.clock import Clock
    from advisor.probe.learning.score import GeneratorRun

METRIC_WORDS = {"r2": "R²", "explained_variance": "of the input's variance explained"}
OVERFIT_GAP = 0.1  # training score this far above the held-out score is called overfitting
ONE_GAUSSIAN_MARGIN = 0.02  # a generator within this of one fitted Gaussian's score has learned no shape


def reason(rule: str, text: str) -> dict[str, str]:
    source = {"net.shallow.first": "W §III-A", "net.shallow.validate": "W §III-A-1"}[rule]
    return {"rule": rule, "text": text, "source": source}


def _name(run: ScoredRun | None) -> str:
    family = None if run is None else run.get("family")
    return str(family or "network").upper()


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


def spread_text(run: Reported | None) -> str:
    """ " (median of 3 splits, 0.961-0.975)" where the run was repeated, else nothing."""
    spread = None if run is None else run.get("spread")
    if not spread:
        return ""
    return f" (median of {spread['splits']} splits, {spread['low']:.3f}{DASH}{spread['high']:.3f})"


def _meets(run: Reported | None, target: float | None) -> bool:
    score = reported(run)
    return bool(target is not None and score is not None and score >= target)


def choose(shallow: ScoredRun | None, deep: ScoredRun | None, target: float | None) -> str | None:
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


def interval_words(expected: CurveFit) -> str:
    """The expected score at full size with its interval, as the verdict and the probe page both write it:
    "0.964, 90% interval 0.944-0.987" (an en dash). Three decimals: a "± 0.02" rounded from a lopsided
    interval disagreed with the interval the page showed beside it."""
    est, low, high = expected["estimate"], expected["low"], expected["high"]
    return f"{est:.3f}, {percent(expected.get('interval', 0.9))} interval {low:.3f}{DASH}{high:.3f}"


def expected_text(expected: CurveFit | None) -> str:
    """ "; expected at full size (48,000 examples) 0.964, 90% interval 0.944-0.987"."""
    if not expected or expected.get("estimate") is None or expected.get("method") == "measured":
        return ""
    return f"; expected at full size ({count(expected['examples'])} examples) {interval_words(expected)}"


def verdict(
    *,
    metric: str,
    target: float | None,
    baseline: Baseline | None,
    shallow: ScoredRun | None,
    deep: ScoredRun | None,
    deep_note: str | None,
    shallow_note: str | None = None,
    expected: CurveFit | None,
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
    shallow_name = _name(shallow)
    deep_name = _name(deep)
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
        estimate = None if expected is None else expected["estimate"]
        if estimate is not None and estimate >= target:
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
    scored: list[tuple[str, Reported | None]] = [("shallow", shallow), ("deep", deep), ("baseline", baseline)]
    spreads = {k: r.get("spread") for k, r in scored if r}
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
        "spread": {k: dict(spread) for k, spread in spreads.items() if spread},
        "expected": None if expected is None else dict(expected),
        "notes": notes,
        "reasons": reasons,
    }


# --- the step ----------------------------------------------------------------------------------------


@dataclass
class Findings:
    """What the supervised probe's verdict reads: the split's metric and held-out size, the baseline, each
    role's run (None: not trained) and why not, the network chosen, its learning curve, the full size."""

    metric: str
    test_examples: int
    baseline: Baseline
    runs: dict[str, ScoredRun | None]
    notes: dict[str, str | None]
    chosen: str | None
    fitted: CurveFit | None
    full_train: int


def conclude(found: Findings, plan: ProbePlan, clock: Clock) -> Verdict:
    """The verdict, with the time to the target of the network chosen (reach.time_to_target) and what the
    time limit cut short."""
    fitted = found.fitted
    result = verdict(
        metric=found.metric,
        target=plan.target,
        baseline=found.baseline,
        shallow=found.runs["shallow"],
        deep=found.runs["deep"],
        deep_note=found.notes["deep"],
        shallow_note=found.notes["shallow"],
        expected=fitted,
    )
    points = [] if fitted is None else fitted.get("points", [])
    run = None if found.chosen is None else found.runs[found.chosen]
    if found.chosen is not None and run is not None:
        timed = time_to_target(
            plan,
            found.chosen,
            run,
            found.full_train,
            points=points,
            fitted=fitted,
            test_examples=found.test_examples,
        )
        result["time_to_target"] = None if timed is None else dict(timed)
    if clock.left() <= 0:
        result["notes"].append("The probe's time limit was reached: later stages ran shorter or not at all.")
    cut = [p for p in points if p.get("stopped") in ("time", "stopped")]
    if cut and fitted is not None and fitted["method"] == "power_law":
        result["notes"].append(
            f"{len(cut)} of the learning curve's points stopped at their share of the time limit, not at a "
            "plateau: if they are undertrained the curve rises too steeply and the estimate at full size is "
            "optimistic. A longer time limit gives a firmer estimate."
        )
    return result


def generation_verdict(
    *,
    family: str | None,
    target: float | None,
    run: GeneratorRun | None,
    baseline: MixtureBaseline | None,
    note: str | None = None,
    test_examples: int | None = None,
) -> GenerationVerdict:
    """What the generation probe concludes, in one sentence and in fields: the generator's two-sample score
    against the target, with the classical baseline beside it."""
    name = (family or "generator").upper()
    score = None if run is None else run.get("score")
    base = None if baseline is None else baseline.get("score")
    met = None if score is None or target is None else bool(score >= target)
    notes: list[str] = []
    if score is None:
        text = f"No generator was scored: {note or 'nothing could be trained'}."
    else:
        measured = f"its generated examples scored {score_text(score, target)} on the two-sample test"
        if target is None:
            text = f"The {name}'s generated examples scored {score_text(score)} on the two-sample test."
        elif met:
            text = f"The {name} met the two-sample target of {target_text(target)}: {measured}."
        else:
            text = f"The {name} missed the two-sample target of {target_text(target)}: {measured}."
        if base is not None and baseline is not None:
            than = "above" if base > score else "below" if base < score else "level with"
            text += f" A {baseline['model']} fitted by scikit-learn scores {score_text(base)}, {than} it."
        if run is not None and run.get("stopped") in ("time", "stopped"):
            notes.append(
                f"Training stopped at the probe's time limit after {run['updates']:,} of its "
                f"{run['planned_updates']:,} recommended updates: a longer limit may score higher."
            )
        if run is not None and run.get("stopped") == "diverged":
            notes.append("Training diverged (the generator drew values that are not finite numbers).")
        single = None if baseline is None else baseline.get("one_gaussian")
        if single is not None and score <= single + ONE_GAUSSIAN_MARGIN:
            why = " (a VAE whose decoder ignores its latent code draws such a blob: posterior collapse)"
            notes.append(
                f"It scores no better than one Gaussian fitted to the sample ({score_text(single)}): it has "
                f"not learned the data's shape{why if family == 'vae' else ''}."
            )
    if baseline is not None and baseline.get("real") is not None:
        notes.append(
            f"Real training examples score {score_text(baseline['real'])} against the held-out ones: the "
            "most this test gives on this sample (1 minus its own noise)."
        )
    if test_examples is not None and test_examples < 200:
        notes.append(
            f"The held-out split holds {test_examples} examples: with so few the score moves by several "
            "hundredths from one split to another."
        )
    if note and score is not None:
        notes.append(note)
    return {
        "text": text,
        "metric": "two_sample",
        "target": target,
        "chosen": None if score is None else "deep",
        "family": family,
        "score": score,
        "baseline_score": base,
        "real_score": None if baseline is None else baseline.get("real"),
        "met": met,
        "notes": notes,
        "reasons": [],
    }
