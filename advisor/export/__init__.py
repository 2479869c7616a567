"""A candidate as plain PyTorch code to take home: model.py (its networks, torch.nn only), train.py (its
recommended set-up and its family's training loop, reading the formats the probe reads) and a README; from a
probe, split.json too (the examples it trained, validated and tested on).

Plain Python: it renders source text from the candidate's JSON and imports neither Django nor torch. The
pages, the API and `manage.py advise --code` gather a `Download` and call `files(download)`.

| module | writes |
|---|---|
| network.py | model.py; `KINDS`, the table of layer kinds |
| training.py | train.py; `LOOPS`, the table of training loops by the registry's steps |
| source.py | the pieces (pieces/: real, linted modules) cut into definitions; layout at ruff's line length |
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.engine.families import family_of
from advisor.export.network import model_file
from advisor.export.training import TrainPy, train_file

FILES = ("model.py", "train.py", "README.md", "split.json")  # split.json: from a probe only
ALLOCATOR_RULE = "cpu.allocator"


@dataclass(frozen=True)
class Allocator:
    """The allocator set-up to start train.py with on a CPU, and why."""

    env: Mapping[str, str]  # {} keeps glibc's default
    text: str  # what was measured, or the rule's advice
    calibration: int | None = None  # the calibration that measured it


@dataclass(frozen=True)
class ProbeSplit:
    """What a probe of this candidate used and measured."""

    probe: int
    role: str  # "shallow" or "deep"
    indices: Mapping[str, list[int]] | None  # "train", "validation", "test"; None before it split
    examples: int
    sample: str  # the sample's name
    label_column: str
    demo: str | None = None  # a bundled data set the sample copies
    score: float | None = None  # its held-out score for this candidate
    metric: str | None = None
    seed: int = 0  # the probe's: its split and its initial weights


@dataclass(frozen=True)
class Download:
    recommendation: Mapping[str, Any]  # as served: spec, candidates, hardware_plan (measured where it was)
    index: int  # the candidate's
    allocator: Allocator | None = None
    probe: ProbeSplit | None = None
    name: str = field(default="")  # what the files call it; default: candidate and recommendation
    variation: str = ""  # a probe's change to the candidate, in words ("every hidden width x2"), or ""

    @property
    def candidate(self) -> Mapping[str, Any]:
        candidate: Mapping[str, Any] = self.recommendation["candidates"][self.index]
        return candidate

    @property
    def title(self) -> str:
        if self.name:
            return self.name
        rec = self.recommendation.get("id")
        where = f" of recommendation #{rec}" if rec is not None else ""
        changed = f", {self.variation}" if self.variation else ""
        return f"Candidate {self.index + 1}{where}{changed}"


# A download's train.py run as its user runs it, in a process that cannot import the advisor: `python -I` puts
# neither PYTHONPATH, the user's site-packages nor the current directory on the path, so the download's folder
# (the current directory) is put there by hand, for `from model import BUILDERS`.
_RUN = (
    "import runpy, sys; sys.path.insert(0, '.'); sys.argv[0] = 'train.py'; "
    "runpy.run_path('train.py', run_name='__main__')"
)


def isolated(argv: list[str]) -> list[str]:
    """The command running train.py (in the current directory) with `argv`, without the advisor."""
    return [sys.executable, "-I", "-c", _RUN, *argv]


def allocator_for(download: Download) -> tuple[dict[str, str], str]:
    """The environment train.py starts with on a CPU, and why: what a calibration measured faster, else the
    rule's advice where the plan gives it (not measured: no environment), else nothing."""
    plan = download.recommendation.get("hardware_plan") or {}
    if plan.get("device") == "gpu":
        return {}, ""
    measured = download.allocator
    if measured is not None:
        by = f" (calibration #{measured.calibration})" if measured.calibration is not None else ""
        return dict(measured.env), f"{ALLOCATOR_RULE}: {measured.text}{by}"
    advice = [r for r in download.recommendation.get("reasons") or [] if r.get("rule") == ALLOCATOR_RULE]
    if advice:
        return {}, (
            f"{ALLOCATOR_RULE}: {advice[0]['text']} Not measured for this network: a calibration on your "
            "CPU measures whether it helps. glibc's default allocator is kept."
        )
    return {}, ""


def probe_split(
    results: Mapping[str, Any], *, probe: int, role: str, sample: str, label_column: str, demo: str | None
) -> ProbeSplit:
    """What a probe's stored `results` (ProbeJob.results) say about the candidate it trained as `role`."""
    split = results.get("split") or {}
    indices = split.get("indices") or None
    examples = (split.get("sample") or {}).get("examples")
    if examples is None:
        examples = sum(len(v) for v in (indices or {}).values())
    run = results.get(role) or {}
    return ProbeSplit(
        probe=probe,
        role=role,
        indices=indices,
        examples=int(examples),
        sample=sample,
        label_column=label_column,
        demo=demo,
        score=run.get("score"),
        metric=(results.get("baseline") or {}).get("metric"),
        seed=int(split.get("seed") or 0),
    )


def split_json(probe: ProbeSplit) -> str:
    assert probe.indices is not None
    parts = {part: list(probe.indices[part]) for part in ("train", "validation", "test")}
    note = {"probe": probe.probe, "sample": probe.sample, "examples": probe.examples}
    return json.dumps({**note, **parts}, separators=(",", ":")) + "\n"


def files(download: Download) -> dict[str, str]:
    """The download's files by name: model.py, train.py, README.md and, from a probe that split its
    sample, split.json."""
    candidate, rec = download.candidate, download.recommendation
    env, env_why = allocator_for(download)
    probe = download.probe
    label = probe.label_column if probe is not None else "label"
    split_note = (
        f"the probe's sample {probe.sample!r} ({probe.examples} examples)" if probe is not None else ""
    )
    found = {
        "model.py": model_file(candidate, download.title),
        "train.py": train_file(
            TrainPy(
                candidate,
                rec["spec"],
                rec.get("hardware_plan") or {},
                title=download.title,
                env=env,
                env_why=env_why,
                label_column=label,
                split_note=split_note,
                seed=probe.seed if probe is not None else 0,
            )
        ),
        "README.md": readme(download, env),
    }
    if probe is not None and probe.indices is not None:
        found["split.json"] = split_json(probe)
    return found


def folder_name(download: Download) -> str:
    rec = download.recommendation.get("id")
    name = f"candidate-{download.index + 1}-{family_of(download.candidate).key}"
    return name if rec is None else f"recommendation-{rec}-{name}"


def zip_bytes(found: Mapping[str, str], folder: str) -> bytes:
    """The files in one folder of a ZIP archive (fixed dates: the same files give the same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in found.items():
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, text)
    return buffer.getvalue()


def readme(download: Download, env: Mapping[str, str]) -> str:
    candidate = download.candidate
    family = family_of(candidate)
    run = " ".join(f"{k}={v}" for k, v in env.items())
    start = f"{run} python train.py" if run else "python train.py"
    lines = [
        f"# {download.title}: {family.title}",
        "",
        f"{int(candidate['parameters']):,} parameters ({candidate['depth']}). Plain PyTorch: needs torch and "
        "numpy only (Pillow for JPEG images).",
        *(
            ["", f"As the probe's next step changed the recommended candidate: {download.variation}."]
            if download.variation
            else []
        ),
        "",
        "- `model.py`: the networks, layer by named layer; `build()` returns each by its role.",
        "- `train.py`: the recommended set-up (each chosen value names its rule) and the family's training "
        "loop, with early stopping on a validation split and the score on a held-out test split.",
    ]
    if download.probe is not None and download.probe.indices is not None:
        lines.append(
            f"- `split.json`: the examples probe #{download.probe.probe} trained, validated and tested on "
            f"({download.probe.examples} examples of the sample {download.probe.sample!r}); train.py uses it "
            "when it is beside it."
        )
    lines += [
        "",
        "Run it:",
        "",
        "```sh",
        *_commented(
            [
                (f"{start} --synthetic --max-steps 2", "two updates on random data of the networks' shapes"),
                (f"{start} --data FILE", "CSV (--label-column), NPZ (x, y), NPY (x) or a ZIP of images"),
                ("python model.py", "the parameters of each network"),
            ]
        ),
        "```",
        "",
        "`--device cuda`, `--threads N`, `--batch-size N`, `--max-steps N`, `--save weights.pt` and "
        "`--report results.json` change or record a run; `python train.py --help` lists them.",
    ]
    probe = download.probe
    if probe is not None:
        lines += ["", f"## From probe #{probe.probe}", ""]
        if probe.indices is None:
            lines.append(
                "The probe recorded no split (it had not split its sample yet, or it ran before probes kept "
                "one): train.py draws its own stratified split of the same shares."
            )
        if probe.score is not None:
            lines.append(
                f"On the sample {probe.sample!r} the probe's {probe.role} network scored {probe.score:.4f} "
                f"({probe.metric or 'score'}) on the held-out test split."
            )
        if probe.demo:
            lines += [
                "",
                f"The sample is scikit-learn's bundled {probe.demo!r} data set; this writes it as an NPZ:",
                "",
                "```sh",
                f'python -c "{demo_command(probe.demo)}"',
                f"{start} --data {probe.demo}.npz",
                "```",
            ]
    return "\n".join(lines) + "\n"


def _commented(commands: list[tuple[str, str]]) -> list[str]:
    """Shell lines with their comments lined up."""
    width = max(len(command) for command, _ in commands)
    return [f"{command:<{width}}  # {comment}" for command, comment in commands]


def demo_command(name: str) -> str:
    """A one-line scikit-learn command writing a bundled data set as the probe reads it (samples.demo)."""
    scale = ".reshape(-1, 1, 8, 8) / 16.0" if name == "digits" else ""
    return (
        f"import numpy as np; from sklearn import datasets; d = datasets.load_{name}(); "
        f"np.savez('{name}.npz', x=d.data.astype('float32'){scale}, y=d.target)"
    )
