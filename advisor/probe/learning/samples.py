"""A user's data sample in one canonical form, and the checks every upload passes before it is kept.

Every accepted upload (CSV, NPZ, NPY or a ZIP of images, see `uploads`) becomes a `Sample`: x float32 [n,
*example_shape] and labels (class indices, regression values, or none). It is stored as one compressed
NPZ, the only form the probe reads.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np

LABEL_KINDS = ("class", "value", "none")


class SampleError(ValueError):
    """A refused sample; `.errors` maps the offending field ("file", "label_column", "data.outputs", ...) to
    messages, like engine.SpecError."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors

    status = 400  # the HTTP status the API answers with


class StorageFull(SampleError):
    """The sample was fine but the server's disk is full: nothing was kept, and not by the client's fault."""

    status = 507


def refuse(message: str, key: str = "file") -> SampleError:
    return SampleError({key: [message]})


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 20_000_000  # the uploaded file: 20 MB (decimal, as every page writes bytes)
    max_examples: int = 50_000
    max_values: int = 20_000_000  # examples x values per example, i.e. 80 MB of float32 in memory


class SampleFacts(TypedDict):
    """What is kept about a sample beside its file (DataSample.info): enough to tell whether it fits a task
    without reading the file."""

    examples: int
    input_shape: list[int]
    label_kind: str
    outputs: int | None
    classes: list[str]
    class_counts: NotRequired[list[int]]  # class labels only


@dataclass
class Sample:
    x: np.ndarray  # [n, *example_shape] float32
    y: np.ndarray | None  # [n] int64 class indices, [n] or [n, k] float32 values, or None
    label_kind: str = "none"  # one of LABEL_KINDS
    classes: list[str] = field(default_factory=list)  # class index -> the name the user gave it

    def __post_init__(self) -> None:
        check_arrays(self)

    @property
    def examples(self) -> int:
        return int(self.x.shape[0])

    @property
    def input_shape(self) -> list[int]:
        return [int(s) for s in self.x.shape[1:]]

    @property
    def outputs(self) -> int | None:
        if self.label_kind == "class":
            return len(self.classes)
        if self.label_kind == "value" and self.y is not None:
            return 1 if self.y.ndim == 1 else int(self.y.shape[1])
        return None

    def describe(self) -> SampleFacts:
        info: SampleFacts = {
            "examples": self.examples,
            "input_shape": self.input_shape,
            "label_kind": self.label_kind,
            "outputs": self.outputs,
            "classes": self.classes,
        }
        if self.label_kind == "class" and self.y is not None:
            counts = np.bincount(self.y, minlength=len(self.classes))
            info["class_counts"] = [int(c) for c in counts]
        return info


def check_arrays(sample: Sample, limits: Limits | None = None) -> None:
    """Refuse arrays the probe cannot learn from; every message says what is wrong and where."""
    x, y = sample.x, sample.y
    if x.ndim < 2 or x.shape[0] == 0:
        raise refuse(f"x must hold one example per row, shape [examples, ...]; got shape {list(x.shape)}")
    if any(s == 0 for s in x.shape[1:]):
        raise refuse(f"x has an empty dimension: shape {list(x.shape)}")
    if limits is not None and x.shape[0] > limits.max_examples:
        raise refuse(f"{x.shape[0]:,} examples; the limit is {limits.max_examples:,} (SAMPLE_MAX_EXAMPLES)")
    if limits is not None and x.size > limits.max_values:
        raise refuse(f"{x.size:,} values in x; the limit is {limits.max_values:,} (SAMPLE_MAX_VALUES)")
    bad = ~np.isfinite(x)
    if bad.any():
        first = int(np.argwhere(bad)[0][0])
        raise refuse(f"x holds {int(bad.sum())} NaN or infinite values (the first in example {first})")
    if sample.label_kind not in LABEL_KINDS:
        raise refuse(f"unknown label kind {sample.label_kind!r}")
    if sample.label_kind == "none":
        if y is not None:
            raise refuse("labels given for a sample without labels")
        return
    if y is None:
        raise refuse("the labels are missing")
    if y.shape[0] != x.shape[0]:
        raise refuse(f"x has {x.shape[0]} examples but y has {y.shape[0]} labels")
    if sample.label_kind == "class":
        if y.ndim != 1:
            raise refuse(f"class labels must be one per example, shape [{x.shape[0]}]; got {list(y.shape)}")
        if len(np.unique(y)) < 2:
            name = sample.classes[int(y[0])] if sample.classes else str(y[0])
            raise refuse(f"the labels hold one class only ({name!r}): nothing to tell apart")
        return
    if y.ndim not in (1, 2):
        raise refuse(
            f"regression targets must have shape [examples] or [examples, outputs]; got {list(y.shape)}"
        )
    if not np.isfinite(y).all():
        raise refuse("y holds NaN or infinite values")
    if np.ptp(y, axis=0).max() == 0:
        raise refuse("the targets in y are all the same value: nothing to learn")


def classes_from(raw: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """Class indices and names when the labels look like classes (strings, integers, integral floats)."""
    if raw.dtype.kind in "US":
        names, index = np.unique(raw.astype(str), return_inverse=True)
        return index.astype(np.int64), [str(n) for n in names]
    if raw.dtype.kind in "biu" or (
        raw.dtype.kind == "f" and np.isfinite(raw).all() and (raw == np.round(raw)).all()
    ):
        values, index = np.unique(raw.astype(np.float64), return_inverse=True)
        return index.astype(np.int64), [str(int(v)) for v in values]
    return None


def from_labels(x: np.ndarray, raw: np.ndarray | None) -> Sample:
    """Decide how to read labels: one column of strings or integers is classes; real numbers are values."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if raw is None:
        return Sample(x, None, "none")
    if raw.dtype.kind not in "biufUS":
        raise refuse(f"y must be numbers or strings; got dtype {raw.dtype}")
    if raw.ndim == 1:
        found = classes_from(raw)
        if found is not None:
            return Sample(x, found[0], "class", found[1])
    if raw.dtype.kind in "US":
        raise refuse(f"string labels must be one per example, shape [{x.shape[0]}]; got {list(raw.shape)}")
    return Sample(x, np.ascontiguousarray(raw, dtype=np.float32), "value")


NAMES_NOT_VALUES = "regression needs numeric targets; the labels are names"


def numeric_names(classes: list[str]) -> bool:
    """Whether class names can be read back as the numbers they were (a regression target)."""
    try:
        [float(c) for c in classes]
    except ValueError:
        return False
    return True


def as_values(sample: Sample) -> np.ndarray:
    """Regression targets [n, k]; numeric class names are read back as the numbers they were."""
    assert sample.y is not None
    if sample.label_kind == "value":
        return sample.y.reshape(sample.examples, -1).astype(np.float32)
    if not numeric_names(sample.classes):
        raise refuse(NAMES_NOT_VALUES, "label_column")
    names = np.array([float(c) for c in sample.classes], dtype=np.float32)
    values: np.ndarray = names[sample.y].reshape(-1, 1)
    return values


# --- the stored form -----------------------------------------------------------------------------------


def save(sample: Sample, path: Path) -> int:
    """Write atomically (a temporary file renamed into place): a crash leaves no half-written sample."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {"x": sample.x, "label_kind": np.array(sample.label_kind)}
    if sample.y is not None:
        arrays["y"] = sample.y
    arrays["classes"] = np.array(sample.classes, dtype=str) if sample.classes else np.zeros(0, dtype="<U1")
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path.stat().st_size


def load(path: Path) -> Sample:
    with np.load(path, allow_pickle=False) as data:
        y = data["y"] if "y" in data.files else None
        return Sample(data["x"], y, str(data["label_kind"]), [str(c) for c in data["classes"]])


# --- demo data, bundled with scikit-learn (no download) ------------------------------------------------


class DemoData(TypedDict):
    examples: int
    input_shape: list[int]
    outputs: int


class DemoSpec(TypedDict):
    """The part of a TaskSpec a demo data set fills in (its task and its data's shape)."""

    task: str
    data: DemoData


class Demo(TypedDict):
    title: str
    spec: DemoSpec


DEMOS: dict[str, Demo] = {
    "digits": {
        "title": "Handwritten digits (8x8 greyscale, 10 classes, 1,797 images)",
        "spec": {"task": "vision", "data": {"examples": 1797, "input_shape": [1, 8, 8], "outputs": 10}},
    },
    "iris": {
        "title": "Iris flowers (4 measurements, 3 species, 150 examples)",
        "spec": {"task": "tabular", "data": {"examples": 150, "input_shape": [4], "outputs": 3}},
    },
    "wine": {
        "title": "Wine cultivars (13 chemical measurements, 3 classes, 178 examples)",
        "spec": {"task": "tabular", "data": {"examples": 178, "input_shape": [13], "outputs": 3}},
    },
    "breast_cancer": {
        "title": "Breast cancer diagnosis (30 features, 2 classes, 569 examples)",
        "spec": {"task": "tabular", "data": {"examples": 569, "input_shape": [30], "outputs": 2}},
    },
}


def demo(name: str) -> Sample:
    from sklearn import datasets

    if name not in DEMOS:
        raise refuse(f"no demo data set {name!r}; choose one of {', '.join(DEMOS)}", "demo")
    bunch = getattr(datasets, f"load_{name}")()
    x = np.asarray(bunch.data, dtype=np.float32)
    if name == "digits":
        x = x.reshape(-1, 1, 8, 8) / 16.0  # [n, 1, 8, 8], grey levels 0..16 scaled to [0, 1]
    names = [str(n) for n in bunch.target_names]
    return Sample(x, np.asarray(bunch.target, dtype=np.int64), "class", names)


def shape_text(shape: list[int] | tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def numel(shape: list[int] | tuple[int, ...]) -> int:
    return int(math.prod(int(s) for s in shape))
