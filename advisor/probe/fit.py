"""Whether a kept sample can be probed with a recommendation, decided from what was kept about the sample
(its facts: shape, labels, classes) and the recommendation's candidates, without reading the sample's file:
the check that refuses a probe (services.submit_probe) and the one that offers probes on the pages."""

from __future__ import annotations

from advisor.contract import Candidate, TaskSpec
from advisor.models import Recommendation
from advisor.probe import conf
from advisor.probe.learning import generation, samples
from advisor.probe.learning.split import check_fit, trainable
from advisor.probe.models import DataSample


def facts_of(sample: DataSample) -> samples.SampleFacts:
    """What was kept about a sample beside its file (its columns and `info`)."""
    facts: samples.SampleFacts = {
        "examples": sample.examples,
        "input_shape": list(sample.input_shape),
        "label_kind": sample.label_kind,
        "outputs": sample.outputs,
        "classes": list((sample.info or {}).get("classes") or []),
    }
    if (sample.info or {}).get("class_counts") is not None:
        facts["class_counts"] = list(sample.info["class_counts"])
    return facts


def fit_errors(*, facts: samples.SampleFacts, spec: TaskSpec) -> dict[str, list[str]]:
    """What stops a sample with these facts serving the spec's task ({} when nothing). Labels are needed
    for supervised goals only: a generation task takes an unlabelled sample."""
    data = spec.get("data")
    input_shape = (data.get("input_shape") if data else None) or []
    if spec.get("task") == "generation":
        return generation.check_fit(facts, input_shape=input_shape)
    return check_fit(
        facts,
        goal=spec.get("goal") or "classify",
        input_shape=input_shape,
        outputs=data.get("outputs") if data else None,
    )


def pick_candidates(rec: Recommendation) -> tuple[int | None, int | None]:
    """The first shallow and the first deep candidate of the recommendation (net.shallow.first); for a
    generation task, no shallow one and, as the deep one, the first that generates from noise."""
    candidates: list[Candidate] = rec.result.get("candidates", [])
    if rec.spec.get("task") == "generation":
        return None, generation.generator_index(candidates)
    shallow = next((i for i, c in enumerate(candidates) if c.get("depth") == "shallow"), None)
    deep = next((i for i, c in enumerate(candidates) if c.get("depth") == "deep"), None)
    return shallow, deep


def probeable(rec: Recommendation) -> list[int]:
    """The candidates a probe can train on this recommendation's task (a supervised output, within the
    server's parameter cap), in the recommendation's order: those a next step may propose."""
    goal = rec.spec.get("goal") or "classify"
    cap = conf.value("PROBE_MAX_PARAMETERS")
    candidates: list[Candidate] = rec.result.get("candidates", [])
    return [
        i
        for i, c in enumerate(candidates)
        if trainable(c, goal) is None and int(c.get("parameters") or 0) <= cap
    ]


def probe_fit(*, facts: samples.SampleFacts | None, recommendation: Recommendation) -> dict[str, list[str]]:
    """What stops a probe of a sample with these facts on this recommendation, whatever the device and the
    time ({} when nothing): the sample's fit to the task, a trainable shallow or deep candidate, the
    server's parameter cap. From the facts alone (no file read), so that a page offers only the probes that
    would start and says why the others would not, before anyone clicks. `facts` None: the candidates only."""
    errors = {} if facts is None else fit_errors(facts=facts, spec=recommendation.spec)
    shallow, deep = pick_candidates(recommendation)
    goal = recommendation.spec.get("goal") or "classify"
    generating = recommendation.spec.get("task") == "generation"  # pick_candidates chose a generator
    usable = [
        i
        for i in (shallow, deep)
        if i is not None and (generating or trainable(recommendation.result["candidates"][i], goal) is None)
    ]
    if not usable:
        errors.setdefault("recommendation", []).append(
            "none of its candidates generates examples from noise (the generation probe trains a GAN or a "
            "VAE)"
            if generating
            else "none of its candidates can be trained on labelled data (the probe needs a shallow or deep "
            "network with a supervised output)"
        )
    cap = conf.value("PROBE_MAX_PARAMETERS")
    for i in usable:
        params = int(recommendation.result["candidates"][i].get("parameters") or 0)
        if params > cap:
            errors.setdefault("recommendation", []).append(
                f"candidate {i} has {params:,} parameters, above this server's probe cap of {cap:,} "
                "(PROBE_MAX_PARAMETERS)"
            )
    return errors
