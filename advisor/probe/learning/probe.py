"""`shallow_first(plan, emit, should_stop)`: the shallow-first workflow on a data sample (W §III-A).

Baseline, then the shallow candidate, then (only if it misses the target) the deep one, each repeated on
other seeds' splits where the sample is small (data.repeats_for), then the learning curve of the network
chosen, then the verdict, with the next step where the target was missed (nextstep.py). Every stage is
emitted as soon as it has something to show, so a probe that is stopped keeps what it measured.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from advisor.contract import TrainingRun, Verdict
from advisor.probe.learning import curve, data, reach, samples, train
from advisor.probe.learning.nextstep import next_step
from advisor.probe.learning.plan import ProbePlan
from advisor.probe.learning.verdict import choose, reported, verdict

Emit = Callable[[dict[str, Any]], None]
EMIT_EVERY_S = 0.5
MAX_ROWS = 200  # per-epoch rows kept per run (evenly thinned; the best and the last always kept)
HOLD_OUT = data.VALIDATION_SHARE  # at full size, this share is held out for validation


def thin(rows: list[dict[str, Any]], best: int | None, limit: int = MAX_ROWS) -> list[dict[str, Any]]:
    if len(rows) <= limit:
        return rows
    step = len(rows) / (limit - 2)
    keep = {int(i * step) for i in range(limit - 2)} | {len(rows) - 1}
    keep |= {i for i, r in enumerate(rows) if r["epoch"] == best}
    return [rows[i] for i in sorted(keep)]


def _public(run: Mapping[str, Any]) -> dict[str, Any]:
    return {**run, "epochs": thin(run["epochs"], run.get("best_epoch"))}


class _Clock:
    def __init__(self, budget_s: float, emit: Emit, should_stop: Callable[[], bool]) -> None:
        self.start = time.monotonic()
        self.deadline = self.start + budget_s
        self.budget = budget_s
        self.emit = emit
        self.should_stop = should_stop
        self.last_emit = 0.0

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def stop(self) -> bool:
        return self.left() <= 0 or self.should_stop()

    def progress(self, step: str, floor: float = 0.0) -> None:
        done = max(floor, min(0.99, (time.monotonic() - self.start) / max(self.budget, 1e-9)))
        self.emit({"type": "progress", "done": round(done, 3), "total": 1, "step": step})

    def stage(self, name: str, payload: Any, *, force: bool = True) -> None:
        now = time.monotonic()
        if force or now - self.last_emit >= EMIT_EVERY_S:
            self.last_emit = now
            self.emit({"type": "stage", "stage": name, "data": payload})


def _train(
    clock: _Clock,
    role: str,
    candidate: dict[str, Any],
    split: data.Split,
    budget: float,
    plan: ProbePlan,
) -> TrainingRun:
    what = f"training the {role} {str(candidate.get('family', '')).upper()}"
    clock.progress(what)

    def on_epoch(run: TrainingRun) -> None:
        if time.monotonic() - clock.last_emit >= EMIT_EVERY_S:
            clock.stage(role, _public(run), force=False)
            clock.progress(f"{what}: epoch {run['epochs'][-1]['epoch']}")

    run = train.train(
        candidate,
        split,
        budget_s=budget,
        full_examples=plan.full_examples,
        seed=plan.seed,
        on_epoch=on_epoch,
        should_stop=clock.stop,
        device=plan.device,
    )
    clock.stage(role, _public(run))
    return run


def prepare(plan: ProbePlan) -> None:
    """Import and warm up what the probe uses, before its clock starts: on a busy machine this takes seconds
    (torch, scikit-learn, SciPy, and the compiler stack torch imports with its first optimiser)."""
    import scipy.optimize  # noqa: F401
    import sklearn.decomposition
    import sklearn.linear_model
    import sklearn.model_selection  # noqa: F401

    from advisor.calibration import make_step

    # The first optimiser torch builds imports its compiler stack: seconds, once per process. A candidate
    # that cannot be built fails again, with its message, in its own stage; the next one warms up instead.
    for role in (plan.shallow, plan.deep):
        if role is not None:
            with contextlib.suppress(Exception):
                make_step(role["candidate"], plan.device)
                break


def shallow_first(plan: ProbePlan, emit: Emit, should_stop: Callable[[], bool] = lambda: False) -> Verdict:
    prepare(plan)
    budget = plan.budget_s if plan.deadline is None else min(plan.budget_s, plan.deadline - time.time())
    clock = _Clock(max(budget, 0.5), emit, should_stop)
    clock.progress("loading the sample")
    sample = samples.load(Path(plan.sample_path))
    roles = [r["candidate"] for r in (plan.shallow, plan.deep) if r is not None]
    ids = any((c.get("io") or {}).get("vocab_size") for c in roles)  # token ids are not standardised
    split = data.split(sample, goal=plan.goal, seed=plan.seed, scale=not ids)
    sizes = {"train": len(split.x_train), "validation": len(split.x_val), "test": len(split.x_test)}
    described = sample.describe() | {"classes": sample.classes[:50]}
    count = plan.repeats or data.repeats_for(len(split.x_test))
    seeds = [plan.seed + i for i in range(max(1, count))]
    clock.stage(
        "split", {**sizes, "sample": described, "indices": split.indices, "seed": plan.seed, "seeds": seeds}
    )
    shallow_cand = plan.shallow["candidate"] if plan.shallow else None
    code = (shallow_cand or {}).get("hidden_sizes") or [None]
    clock.progress("fitting the baseline")
    fitting = time.monotonic()
    base = data.baseline(split, code_size=code[0], seed=plan.seed)
    clock.stage("baseline", base)
    splits = _Splits(sample, plan, split, base, seeds, scale=not ids, code_size=code[0])
    splits.base_seconds = time.monotonic() - fitting
    full_train = max(1, round(plan.full_examples * (1 - HOLD_OUT)))
    # the verdict's and the curve's steps read runs as plain dicts (advisor/probe/learning/verdict.py)
    runs: dict[str, dict[str, Any] | None] = {"shallow": None, "deep": None}
    deep_note: str | None = None
    shallow_note: str | None = None
    candidates = {"shallow": shallow_cand, "deep": plan.deep["candidate"] if plan.deep else None}
    attempted: list[int] = []  # the candidates this probe tried (trained, or found it could not)
    for role in ("shallow", "deep"):
        cand = candidates[role]
        if role == "deep":
            if runs["shallow"] is not None and (
                plan.target is None or (reported(runs["shallow"]) or 0) >= plan.target
            ):
                deep_note = "deep not needed" if plan.target is not None else "no target"
                break
            if cand is None:
                deep_note = (
                    f"this probe tries only the next step of probe #{plan.previous}"
                    if plan.previous is not None
                    else "the recommendation lists no deep candidate to try"
                )
                break
        if cand is None:
            shallow_note = (
                f"this probe tries only the next step of probe #{plan.previous}"
                if plan.previous is not None
                else "the recommendation lists no shallow candidate"
            )
            continue
        why = data.trainable(cand, plan.goal)
        entry = plan.shallow if role == "shallow" else plan.deep
        if entry is not None:
            attempted.append(int(entry["index"]))
        if why:
            if role == "deep":
                deep_note = f"the deep candidate cannot be probed: {why}"
            else:
                shallow_note = f"the shallow candidate cannot be probed: {why}"
            clock.stage(role, {"skipped": why, "family": cand.get("family")})
            continue
        if clock.stop():
            deep_note = deep_note or "the time limit was reached before the deep network could be trained"
            break
        # shallow and deep each leave time for what follows: the deep network and the learning curve
        share = 0.35 if role == "shallow" and plan.target is not None and candidates["deep"] else 0.5
        try:
            runs[role] = dict(_train(clock, role, cand, split, clock.left() * share, plan))
        except Exception as exc:  # one candidate that cannot train on this data must not sink the other
            why = f"training failed: {type(exc).__name__}: {exc}"[:500]
            if role == "deep":
                deep_note = f"the deep candidate {why}"
            else:
                shallow_note = f"the shallow candidate {why}"
            clock.stage(role, {"skipped": why, "family": cand.get("family")})
            continue
        _repeat(clock, role, cand, runs[role], splits, share, plan)  # type: ignore[arg-type]
    chosen = choose(runs["shallow"], runs["deep"], plan.target)
    fitted = None
    if chosen is not None:
        fitted = _curve(clock, plan, candidates[chosen], runs[chosen], split, full_train)  # type: ignore[arg-type]
    result = verdict(
        metric=split.metric,
        target=plan.target,
        baseline=base,
        shallow=runs["shallow"],
        deep=runs["deep"],
        deep_note=deep_note,
        shallow_note=shallow_note,
        expected=fitted,
    )
    if chosen is not None:
        result["time_to_target"] = _time_to_target(
            plan,
            chosen,
            runs[chosen],  # type: ignore[arg-type]
            full_train,
            points=(fitted or {}).get("points", []),
            fitted=fitted,
            test_examples=len(split.x_test),
        )
    if clock.left() <= 0:
        result["notes"].append("The probe's time limit was reached: later stages ran shorter or not at all.")
    cut = [p for p in (fitted or {}).get("points", []) if p.get("stopped") in ("time", "stopped")]
    if cut and (fitted or {}).get("method") == "power_law":
        result["notes"].append(
            f"{len(cut)} of the learning curve's points stopped at their share of the time limit, not at a "
            "plateau: if they are undertrained the curve rises too steeply and the estimate at full size is "
            "optimistic. A longer time limit gives a firmer estimate."
        )
    if plan.target is not None and not result["met"]:
        result["next"] = next_step(
            target=plan.target,
            runs={r: (runs[r], (plan.shallow if r == "shallow" else plan.deep)) for r in ("shallow", "deep")},
            chosen=chosen,
            fitted=fitted,
            candidates=plan.candidates,
            tried=sorted({*plan.tried, *attempted}),
        )
    clock.stage("verdict", result)
    return result


class _Splits:
    """The probe's splits by seed, each standardised on its own training part, with its paired baseline: the
    first is the probe's own; the others are drawn when a repeat first needs them."""

    def __init__(
        self,
        sample: samples.Sample,
        plan: ProbePlan,
        first: data.Split,
        base: dict[str, Any],
        seeds: list[int],
        *,
        scale: bool,
        code_size: int | None,
    ) -> None:
        self.sample, self.plan, self.scale, self.code_size = sample, plan, scale, code_size
        self.seeds = seeds
        self.splits = {plan.seed: first}
        self.baselines = {plan.seed: base}
        self.base_seconds = 0.0  # what the first split's baseline took: another split's costs as much

    def __call__(self, seed: int) -> data.Split:
        if seed not in self.splits:
            split = data.split(self.sample, goal=self.plan.goal, seed=seed, scale=self.scale)
            self.splits[seed] = split
            self.baselines[seed] = data.baseline(split, code_size=self.code_size, seed=seed)
        return self.splits[seed]


def _repeat(
    clock: _Clock,
    role: str,
    cand: dict[str, Any],
    run: dict[str, Any],
    splits: _Splits,
    share: float,
    plan: ProbePlan,
) -> None:
    """The run again on the other seeds' splits (each stratified, standardised on its own training part), then
    its median and spread beside the first split's run, and the baseline's on the same splits (paired).

    The first split's run kept the role's whole share of the time (it is the probe's own: its epochs, its
    curve, its code download). A repeat trains the way it did: at most twice the updates it needed to reach
    its best epoch, and at most 1.5 times its seconds, within the same share of what is left."""
    seeds = splits.seeds[1:]
    updates = 2 * max(1, int(run["best_epoch"] or 1)) * int(run["steps_per_epoch"])
    seconds = 1.5 * max(float(run.get("seconds") or 0.0), 0.5)
    scores: list[float | None] = [run["score"]]
    train_scores: list[float | None] = [run["train_score"]]
    for i, seed in enumerate(seeds):
        # a new split's baseline cannot be interrupted: draw one only with time for it and some training
        if clock.stop() or (seed not in splits.splits and clock.left() < 2 * splits.base_seconds + 1.0):
            break
        clock.progress(f"repeating the {role} network: split {i + 2} of {len(seeds) + 1}")
        try:
            part = splits(seed)  # drawn, with its baseline, before the time for training is counted
            again = train.train(
                cand,
                part,
                budget_s=max(0.1, min(seconds, clock.left() * share / (len(seeds) - i))),
                full_examples=plan.full_examples,
                max_updates=updates,
                seed=seed,
                should_stop=clock.stop,
                device=plan.device,
            )
        except Exception:  # the first split trained it: a repeat that fails leaves the splits measured so far
            break
        scores.append(again["score"])
        train_scores.append(again["train_score"])
    if len(scores) < 2:
        return
    measured = [plan.seed, *seeds][: len(scores)]
    run["spread"] = data.spread(scores, measured)
    run["train_spread"] = data.spread(train_scores, measured)
    clock.stage(role, _public(run))
    base = splits.baselines[plan.seed]
    drawn = [s for s in splits.seeds if s in splits.baselines]  # every split any network was scored on
    base["spread"] = data.spread([splits.baselines[s]["score"] for s in drawn], drawn)
    clock.stage("baseline", base)


def _curve(
    clock: _Clock,
    plan: ProbePlan,
    cand: dict[str, Any],
    run: dict[str, Any],
    split: data.Split,
    full_train: int,
) -> dict[str, Any]:
    points: list[dict[str, Any]] = []
    n_train = len(split.x_train)
    fractions = sorted(f for f in plan.fractions if 0 < f < 1)
    # As many updates as the full run needed to reach its best, with room to spare: a smaller share of the
    # sample is held back only by fewer examples, not by fewer updates.
    updates = 2 * max(1, int(run["best_epoch"] or 1)) * int(run["steps_per_epoch"])
    for i, fraction in enumerate(fractions):
        if clock.stop():
            break
        sub = data.subsample(split, fraction, seed=plan.seed)
        if len(sub.x_train) >= n_train:
            continue
        clock.progress(f"learning curve: {len(sub.x_train)} of {n_train} training examples")
        part = train.train(
            cand,
            sub,
            budget_s=clock.left() * 0.9 / (len(fractions) - i),
            full_examples=plan.full_examples,
            max_updates=updates,
            seed=plan.seed,
            should_stop=clock.stop,
            device=plan.device,
        )
        if part["score"] is not None:
            points.append(
                {
                    "fraction": fraction,
                    "examples": len(sub.x_train),
                    "score": part["score"],
                    "epochs": len(part["epochs"]),
                    "stopped": part["stopped"],
                }
            )
            clock.stage("curve", {"points": points, "family": cand.get("family")})
    points.append(
        {
            "fraction": 1.0,
            "examples": n_train,
            "score": run["score"],
            "epochs": len(run["epochs"]),
            "stopped": run["stopped"],
        }
    )
    fitted = curve.fit(points, full_examples=full_train, test_examples=len(split.x_test))
    fitted["points"] = points
    fitted["line"] = curve.curve_points(fitted, start=points[0]["examples"])
    fitted["family"] = cand.get("family")
    clock.stage("curve", fitted)
    return fitted


def _time_to_target(
    plan: ProbePlan,
    role: str,
    run: dict[str, Any],
    full_train: int,
    *,
    points: list[dict[str, Any]] | None = None,
    test_examples: int | None = None,
    fitted: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Epochs and seconds to the target at full size: `full_train` training examples, the same full size
    the learning curve extrapolates to. A run whose reported score (the median of its splits where
    repeated) misses the target has not reached it, even if one epoch's held-out score touched it (the
    verdict and this line must agree). Then, given the learning curve's `points`, `forecast` says whether
    and when the full size would (`reach.predict`), or why that cannot be told; `caveat` says when the test
    split is too small to time the target at all."""
    reached = curve.epochs_to_target(run, plan.target)
    if reached is None:
        return None
    if reported(run) is None or (reported(run) or 0) < (plan.target or 0):
        reached = {"reached": False, "epoch": None, "updates": None}
    answer: dict[str, Any] = {"role": role, **reached, "full_size_examples": full_train}
    if reached["reached"]:
        epochs = curve.full_size_epochs(
            reached["updates"], batch_size=run["batch_size"], full_examples=full_train
        )
        answer["epochs_at_full_size"] = epochs
        per_epoch = plan.seconds_per_epoch.get(role)
        if per_epoch and per_epoch.get("seconds") is not None:
            answer["seconds_per_epoch"] = per_epoch["seconds"]
            answer["basis"] = per_epoch.get("basis")
            answer["seconds_to_target"] = epochs * float(per_epoch["seconds"])
    if test_examples is None or plan.target is None:
        return answer
    why = reach.unresolvable(plan.target, test_examples, plan.goal)
    if reached["reached"]:
        if why:
            answer["caveat"] = why
        return answer
    forecast = reach.predict(
        run,
        points or [],
        target=plan.target,
        goal=plan.goal,
        full_train=full_train,
        batch_size=run["batch_size"],
        test_examples=test_examples,
        fitted=fitted,  # the verdict's own estimate at full size: the page shows one number
    )
    forecast.pop("fit", None)
    per_epoch = plan.seconds_per_epoch.get(role) or {}
    if forecast["reached"] and per_epoch.get("seconds") is not None:
        forecast["seconds_to_target"] = forecast["epochs"] * float(per_epoch["seconds"])
        forecast["basis"] = per_epoch.get("basis")
    answer["forecast"] = forecast
    return answer
