"""The probe as a pipeline: sample -> split -> baseline -> train -> score -> curve -> verdict (-> next step),
each step a function of its own module with typed input and output, all on one clock (clock.py) that emits
every stage as soon as it has something to show, so a probe that is stopped keeps what it measured.

1. sample: samples.load -> Sample
2. split: split.split_sample -> Splits (split.split_unlabelled -> Split); stage `split`
3. baseline: baseline.fit_baseline -> Baselines (baseline.fit_mixture -> MixtureBaseline); stage `baseline`
4. train: train.train_role -> RoleRun (train.train_generator_step -> TrainedNet); stages `shallow`, `deep`
   (`generator`)
5. score: score.repeat -> ScoredRun (score.score_generator -> GeneratorRun)
6. curve: curve.learning_curve -> CurveFit; stage `curve`
7. verdict: verdict.conclude -> Verdict (verdict.generation_verdict -> GenerationVerdict); stage `verdict`
   then, where the target was missed, nextstep.next_step -> NextStep: the verdict's `next`

`shallow_first` is the shallow-first workflow on a data sample (W §III-A): the baseline, then the shallow
candidate, then (only if it misses the target) the deep one, each scored again on other seeds' splits where
the sample is small, then the learning curve of the network chosen, then the verdict, with the next step
where the target was missed. `probe_generation` runs the same steps for a generation task (no shallow
candidate, no repeats, no curve): the generator is trained and its samples scored by the two-sample test.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from advisor.contract import GenerationVerdict, Verdict
from advisor.probe.learning import baseline, curve, nextstep, samples, score, split, train, verdict
from advisor.probe.learning.clock import Clock, Emit
from advisor.probe.learning.generation import Scale
from advisor.probe.learning.plan import ProbePlan

HOLD_OUT = split.VALIDATION_SHARE  # at full size, this share is held out for validation
ROLES = ("shallow", "deep")


def prepare(plan: ProbePlan) -> None:
    """Import and warm up what the probe uses, before its clock starts: on a busy machine this takes seconds
    (torch, scikit-learn, SciPy, and the compiler stack torch imports with its first optimiser)."""
    import scipy.optimize  # noqa: F401
    import sklearn.decomposition
    import sklearn.linear_model
    import sklearn.model_selection

    from advisor.calibration import make_step

    if plan.task == "generation":  # beyond the supervised probe's: the mixture and the two-sample test
        import sklearn.mixture
        import sklearn.neighbors  # noqa: F401
    # The first optimiser torch builds imports its compiler stack: seconds, once per process. A candidate
    # that cannot be built fails again, with its message, in its own stage; the next one warms up instead.
    for role in (plan.shallow, plan.deep):
        if role is not None:
            with contextlib.suppress(Exception):
                make_step(role["candidate"], plan.device)
                break


def shallow_first(plan: ProbePlan, emit: Emit, should_stop: Callable[[], bool] = lambda: False) -> Verdict:
    prepare(plan)
    clock = Clock.of(plan, emit, should_stop)
    clock.progress("loading the sample")
    sample = samples.load(Path(plan.sample_path))  # 1
    entries = [e for e in (plan.shallow, plan.deep) if e is not None]
    ios = [io for e in entries if (io := e["candidate"].get("io"))]
    ids = any(io.get("vocab_size") for io in ios)  # token ids stay whole numbers: not standardised
    splits = split.split_sample(sample, plan, clock, scale=not ids)  # 2
    sizes = plan.shallow["candidate"].get("hidden_sizes") if plan.shallow else None
    baselines = baseline.fit_baseline(splits, clock, code_size=sizes[0] if sizes else None)  # 3
    tried = train.Tried()
    for role in ROLES:
        trained = train.train_role(role, plan, splits.first, tried, clock)  # 4
        if trained is not None:
            score.repeat(trained, baselines, plan, clock)  # 5
        if tried.done:
            break
    chosen = verdict.choose(tried.runs["shallow"], tried.runs["deep"], plan.target)
    full_train = max(1, round(plan.full_examples * (1 - HOLD_OUT)))
    entry = {"shallow": plan.shallow, "deep": plan.deep}
    fitted = None
    run = None if chosen is None else tried.runs[chosen]
    picked = None if chosen is None else entry[chosen]
    if run is not None and picked is not None:  # 6: the learning curve of the network chosen
        fitted = curve.learning_curve(
            picked["candidate"], run, splits.first, plan, clock, full_train=full_train
        )
    found = verdict.Findings(
        metric=splits.first.metric,
        test_examples=len(splits.first.x_test),
        baseline=baselines.first,
        runs=tried.runs,
        notes=tried.notes,
        chosen=chosen,
        fitted=fitted,
        full_train=full_train,
    )
    result = verdict.conclude(found, plan, clock)  # 7
    if plan.target is not None and not result["met"]:
        step = nextstep.next_step(
            target=plan.target,
            runs={r: (tried.runs[r], entry[r]) for r in ROLES},
            chosen=chosen,
            fitted=fitted,
            candidates=plan.candidates,
            tried=sorted({*plan.tried, *tried.attempted}),
            variation=plan.variation,
            max_parameters=plan.max_parameters,
            previous_score=plan.previous_score,
        )
        result["next"] = None if step is None else dict(step)
    clock.stage("verdict", result)
    return result


def probe_generation(
    plan: ProbePlan, emit: Emit, should_stop: Callable[[], bool] = lambda: False
) -> GenerationVerdict:
    """The generation probe: split, baseline, the generator trained within the probe's time, its score on
    the held-out split, the verdict; each stage emitted as it comes (a stopped probe keeps what it has)."""
    prepare(plan)
    clock = Clock.of(plan, emit, should_stop)
    clock.progress("loading the sample")
    sample = samples.load(Path(plan.sample_path))  # 1
    part = split.split_unlabelled(sample, plan, clock)  # 2
    standard = Scale.fit("standard", part.x_train)  # the scale every score is taken on
    base = baseline.fit_mixture(part, standard, plan, clock)  # 3
    entry = plan.deep
    run: score.GeneratorRun | None = None
    if entry is None:
        note: str | None = "the recommendation lists no candidate that generates from noise (a GAN or a VAE)"
    else:
        trained = train.train_generator_step(entry, plan, part, clock)  # 4
        if isinstance(trained, str):
            note = trained
        else:
            note = None
            run = score.score_generator(trained, part, standard, plan, clock)  # 5
    result = verdict.generation_verdict(  # 7 (no learning curve: 6)
        family=None if entry is None else str(entry["candidate"].get("family") or ""),
        target=plan.target,
        run=run,
        baseline=base,
        note=note,
        test_examples=len(part.x_test),
    )
    if clock.left() <= 0:
        result["notes"].append("The probe's time limit was reached: later stages ran shorter or not at all.")
    clock.stage("verdict", result)
    return result
