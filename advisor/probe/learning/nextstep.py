"""The next step after a probe that missed its target (issue 25 item 4): what the probe's own curves say went
wrong, and which candidate of the same recommendation to probe next, with that reason.

The diagnosis reads the network the verdict follows (the better one when both missed):
- **under-fitting**: its score on its own training split (at the best epoch) is below the target: it cannot
  fit even the examples it trains on, so more data will not help: more capacity or another family. Next: the
  first untried candidate (in the recommendation's order) with more parameters; else, when its run was cut
  by its share of the time limit, the same candidate trained alone (a probe of one candidate gives it the
  whole limit).
- **data**: its training score reaches the target but the held-out score does not, and the learning curve
  still rises at the sample's size (doubling the training examples gains at least `RISING` on the fitted
  curve), or the full data set is expected to reach the target: more data. Next: no other candidate (the
  probe cannot make data); the verdict says so.
- **over-fitting**: the same gap between training and held-out scores with a flat curve (or one too short
  to tell): regularisation, a smaller network or more data. Next: the first untried candidate with fewer
  parameters.

Where no untried candidate fits, the step proposes the same candidate with a stated change (`variation`,
advisor/engine/variation.py), kept beside its index so that the next probe, its page and its code download
build exactly what it trains: under-fitting -> every hidden width x2 (on top of the width this probe's own
variation has: x2 then x4), while the widened network stays within the server's parameter cap; over-fitting
-> weight decay (1e-3 for Adam-style optimisers, 5e-4 for SGD), then ten times that once. A probe that was
itself a widening and scored no better than the probe before it (less than `GAINED` higher) is not widened
again: its training score's shortfall is then not capacity (on iris two classes overlap: x2 and x4 scored
what x1 did, bench/results/chain_amd-epyc-2c_variation/). Where nothing applies, `candidate` is None and the
text says what would help instead.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from advisor.engine.variation import CannotVary, describe, weight_decay_for, widen
from advisor.probe.learning.curve import CurveFit
from advisor.probe.learning.plan import PlanEntry
from advisor.probe.learning.split import ScoredRun, reported, train_score
from advisor.probe.learning.verdict import score_text, target_text

RISING = 0.005  # half a point gained by doubling the training examples: the curve still rises
WIDER = 2  # an under-fitting candidate's next width factor
GAINED = 0.005  # half a point: what a widening must add to its previous probe's score to be widened again
DECAY_STEPS = 2  # weight decay proposed at most twice: its first value, then ten times that

UNDER, DATA, OVER = "under-fitting", "data", "over-fitting"
ADVICE = {
    UNDER: "more capacity or another family",
    DATA: "more data",
    OVER: "regularisation, a smaller network or more data",
}


class NextStep(TypedDict):
    """The verdict's `next` (docs/CONTRACT.md): the diagnosis and the candidate to probe next, or why none."""

    diagnosis: str  # UNDER, DATA or OVER
    text: str
    advice: str
    from_candidate: int
    candidate: int | None
    change: str | None  # how the candidate is probed differently ("trained alone, ..."), or None
    # the change as data, against the recommendation's candidate ({"width": 4}, {"weight_decay": 0.001}):
    # what the next probe stores and trains (advisor/engine/variation.py); None: the candidate as recommended
    variation: NotRequired[dict[str, float] | None]
    family: NotRequired[str | None]
    depth: NotRequired[str | None]
    parameters: NotRequired[int]
    reason: NotRequired[str]


def doubling_gain(fitted: CurveFit | None, examples: int) -> float | None:
    """What the fitted learning curve a - b n^-c gains from `examples` to twice as many (None: no fit)."""
    params = None if fitted is None else fitted.get("params")
    if not params or fitted is None or fitted["method"] != "power_law" or examples <= 0:
        return None
    b, c = float(params["b"]), float(params["c"])
    return float(b * examples ** (-c) * (1 - 2 ** (-c)))


def diagnose(run: ScoredRun, *, target: float, fitted: CurveFit | None) -> tuple[str, str] | None:
    """(diagnosis, why) for a run that missed `target`; None when it met it or has no score."""
    held, trained = reported(run), train_score(run)
    if held is None or held >= target:
        return None
    name = str(run.get("family") or "network").upper()
    t = target_text(target)
    if trained is None or trained < target:
        seen = "" if trained is None else f" scores {score_text(trained, target)} on its own training split,"
        return UNDER, (
            f"The {name}{seen} below the target {t}: it under-fits, and more data will not lift it; "
            f"{ADVICE[UNDER]} would."
        )
    gap = f"{score_text(trained, target)} on its training split but {score_text(held, target)} held out"
    gain = doubling_gain(fitted, int(run.get("train_examples") or 0))
    expected = fitted["estimate"] if fitted is not None and fitted["method"] == "power_law" else None
    if (gain is not None and gain >= RISING) or (expected is not None and expected >= target):
        rises = (
            [] if gain is None else [f"doubling the examples gains about {gain:.3f} on its learning curve"]
        )
        if expected is not None:
            size = 0 if fitted is None else fitted["examples"]
            rises.append(f"the curve expects {expected:.3f} at full size ({size:,} examples)")
        return DATA, f"The {name} scores {gap}, and {'; '.join(rises)}: {ADVICE[DATA]}."
    flat = (
        "its learning curve is too short to tell whether more data would close the gap"
        if gain is None
        else f"its learning curve is flat at the sample's size (doubling gains {gain:.3f})"
    )
    return OVER, f"The {name} scores {gap}, and {flat}: it over-fits; {ADVICE[OVER]} would help."


def _title(entry: PlanEntry) -> str:
    cand = entry["candidate"]
    return (
        f"candidate {entry['index'] + 1} ({cand.get('depth', '')} {str(cand.get('family', '')).upper()}, "
        f"{int(cand.get('parameters') or 0):,} parameters)"
    )


def _varied(
    entry: PlanEntry,
    diagnosis: str,
    variation: dict[str, float],
    max_parameters: int | None,
) -> tuple[dict[str, float], int, str] | None:
    """The same candidate with the change the diagnosis asks for, on top of this probe's own `variation`:
    (the whole variation, the varied network's parameters, the change in words); None when none applies."""
    cand = entry["candidate"]
    if diagnosis == UNDER:
        width = int(variation.get("width") or 1) * WIDER
        try:
            wide = widen(cand, WIDER)  # the entry holds this probe's candidate, already varied
        except CannotVary:
            return None
        if max_parameters is not None and wide["parameters"] > max_parameters:
            return None
        return {**variation, "width": width}, int(wide["parameters"]), f"every hidden width x{WIDER}"
    if diagnosis == OVER:
        first = weight_decay_for(str(cand["training"].get("optimizer") or "adam"))
        now = variation.get("weight_decay")
        decay = first if now is None else float(now) * 10
        if decay > first * 10 ** (DECAY_STEPS - 1) * 1.001:
            return None
        decay = float(f"{decay:.3g}")
        return (
            {**variation, "weight_decay": decay},
            int(cand.get("parameters") or 0),
            f"weight decay {decay:g}",
        )
    return None


def next_step(
    *,
    target: float,
    runs: dict[str, tuple[ScoredRun | None, PlanEntry | None]],
    chosen: str | None,
    fitted: CurveFit | None,
    candidates: list[PlanEntry],
    tried: list[int],
    variation: dict[str, float] | None = None,
    max_parameters: int | None = None,
    previous_score: float | None = None,
) -> NextStep | None:
    """`runs`: role -> (its run or None, its plan entry {"index", "candidate"} or None); `candidates`: the
    recommendation's candidates a probe could train, as {"index", "candidate"}; `tried`: the indices this
    probe's chain has tried; `variation`: this probe's own change to its candidate (a next step's);
    `max_parameters`: the server's cap on a probe's network; `previous_score`: the score the probe before
    this one in its chain reported. None when nothing was trained or the target was met."""
    if chosen is None:
        return None
    run, entry = runs[chosen]
    if run is None or entry is None:
        return None
    found = diagnose(run, target=target, fitted=fitted)
    if found is None:
        return None
    diagnosis, why = found
    own = dict(variation or {})
    size = int(entry["candidate"].get("parameters") or 0)
    untried = [c for c in candidates if c["index"] not in tried]
    pick: PlanEntry | None = None
    change: str | None = None
    varied: dict[str, float] | None = None
    if diagnosis == UNDER:
        pick = next((c for c in untried if int(c["candidate"].get("parameters") or 0) > size), None)
        shared = sum(1 for r, e in runs.values() if e is not None) > 1
        if pick is None and run.get("stopped") == "time" and shared:
            pick, change = (
                entry,
                "trained alone, with the whole time limit (its run here stopped at its share)",
            )
            varied = own or None
    elif diagnosis == OVER:
        pick = next((c for c in untried if int(c["candidate"].get("parameters") or 0) < size), None)
    parameters: int | None = None
    held = reported(run)
    stalled = (
        diagnosis == UNDER
        and int(own.get("width") or 1) > 1
        and previous_score is not None
        and held is not None
        and held < previous_score + GAINED
    )
    # widened and no better: widening again would not be either, so a stalled chain varies nothing
    if (
        not stalled
        and pick is None
        and (change_found := _varied(entry, diagnosis, own, max_parameters)) is not None
    ):
        varied, parameters, words = change_found
        pick, change = entry, f"with {words} ({describe(varied)} against the recommendation's)"
    step: NextStep = {
        "diagnosis": diagnosis,
        "text": why,
        "advice": ADVICE[diagnosis],
        "from_candidate": entry["index"],
        "candidate": None,
        "change": change,
        "variation": varied,
    }
    if pick is None and stalled:
        step["reason"] = (
            f"every hidden width x{int(own['width'])} scored {held or 0.0:.3f} against "
            f"{previous_score or 0.0:.3f} before it: more width gains nothing here, so what "
            "the training score lacks is likely the data's own (classes that overlap, noisy labels) rather "
            "than capacity: better features or more informative data is the next step"
        )
        return step
    if pick is None:
        step["reason"] = {
            UNDER: "no untried candidate of this recommendation is larger, and this one cannot be widened "
            "within the server's parameter cap: a recommendation for a harder task (or another family) is "
            "the next step",
            DATA: "a larger sample is the next step; no other candidate of this recommendation is needed",
            OVER: "no untried candidate of this recommendation is smaller, and weight decay was tried: "
            "dropout or more data is the next step",
        }[diagnosis]
        return step
    cand = pick["candidate"]
    step["candidate"] = pick["index"]
    step["family"], step["depth"] = cand.get("family"), cand.get("depth")
    step["parameters"] = int(cand.get("parameters") or 0) if parameters is None else parameters
    if change:
        step["reason"] = f"probe {_title(pick)} again, {change}"
    else:
        more = "more" if diagnosis == UNDER else "fewer"
        step["reason"] = f"probe {_title(pick)} next: {more} parameters than the {size:,} of this one"
    return step
