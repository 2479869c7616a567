"""The TaskSpec's fields, declared once: name, section, kind, bounds, vocabulary, required or nullable.

The engine's validation (spec.py) knows which fields exist from here; the API's serializer
(advisor/api/spec.py) is made from these declarations, and the wizard's form (advisor/web/forms.py) shows
exactly these fields, in these sections. The engine alone decides what a value means and which defaults
apply (spec.normalise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from advisor.engine.catalog import gpu_catalog

TASKS = ("generation", "vision", "sequence", "tabular")
GENERATIONS = ("random", "controlled", "sequence")
GOALS = ("classify", "regress", "compress")
LINKS = ("pcie3", "pcie4", "pcie5", "nvlink")
STORAGES = ("hdd", "ssd", "nvme", "nvme-raid0")
BYTES_PER_VALUE = (1, 2, 4, 8)

GPU_HELP = "an id from GET catalog/gpus/, null for CPU"
Section = Literal["", "data", "hardware", "target"]


def _gpu_choices() -> tuple[str, ...]:
    return tuple(str(gpu["id"]) for gpu in gpu_catalog())


@dataclass(frozen=True)
class SpecField:
    section: Section  # "" for the top level
    name: str
    kind: Literal["choice", "int", "number", "ints"]  # "ints": a list of whole numbers
    required: bool = False
    nullable: bool = False
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str | int, ...] | Callable[[], tuple[str, ...]] = ()
    help: str = ""
    tasks: tuple[str, ...] = ()  # the tasks it belongs to (empty: every task); the wizard shows it for those

    def applies(self, task: str | None) -> bool:
        """Whether the field belongs to `task` (every field while no task is chosen)."""
        return not self.tasks or task is None or task in self.tasks

    @property
    def path(self) -> str:
        return f"{self.section}.{self.name}" if self.section else self.name

    def vocabulary(self) -> tuple[str | int, ...]:
        return self.choices() if callable(self.choices) else self.choices


# the tasks that learn from labels: a goal, outputs and an accuracy target belong to them, not to generation
SUPERVISED = ("vision", "tabular", "sequence")

FIELDS: tuple[SpecField, ...] = (
    SpecField("", "task", "choice", required=True, choices=TASKS),
    SpecField("", "generation", "choice", nullable=True, choices=GENERATIONS, tasks=("generation",)),
    SpecField("", "goal", "choice", nullable=True, choices=GOALS, tasks=SUPERVISED),
    SpecField("data", "examples", "int", required=True, minimum=1),
    SpecField("data", "input_shape", "ints", required=True, minimum=1),
    SpecField("data", "vocab_size", "int", nullable=True, minimum=2, tasks=("sequence", "generation")),
    SpecField("data", "outputs", "int", nullable=True, minimum=1, tasks=SUPERVISED),
    SpecField("data", "labelled_fraction", "number", minimum=0, maximum=1),
    SpecField("data", "bytes_per_value", "choice", choices=BYTES_PER_VALUE),
    SpecField("hardware", "cpu_cores", "int", required=True, minimum=1),
    SpecField("hardware", "cpu_threads", "int", minimum=1),
    SpecField("hardware", "ram_gb", "number", required=True, help="> 0"),
    SpecField(
        "hardware",
        "gpu",
        "choice",
        nullable=True,
        choices=_gpu_choices,
        help="an id from GET catalog/gpus/, null for CPU",
    ),
    SpecField("hardware", "gpus_per_node", "int", minimum=0),
    SpecField("hardware", "gpu_memory_gb", "number", nullable=True),
    SpecField("hardware", "nodes", "int", minimum=1),
    SpecField("hardware", "link", "choice", choices=LINKS),
    SpecField("hardware", "storage", "choice", choices=STORAGES),
    SpecField("target", "accuracy", "number", nullable=True, minimum=0, maximum=1, tasks=SUPERVISED),
    # a generation task's target: the classifier two-sample score its samples should reach
    # (advisor/probe/learning/generation.py; 1: a classifier cannot tell generated from real examples)
    SpecField(
        "target",
        "two_sample",
        "number",
        nullable=True,
        minimum=0,
        maximum=1,
        help="generation only: 0 to 1, 1 = generated cannot be told from real",
        tasks=("generation",),
    ),
    SpecField("target", "time_budget_hours", "number", nullable=True, help="> 0"),
)

# The sections and their fields, in the contract's order; the top level also names the three sections.
SECTIONS: dict[str, tuple[str, ...]] = {
    "": (*(f.name for f in FIELDS if f.section == ""), "data", "hardware", "target"),
    **{s: tuple(f.name for f in FIELDS if f.section == s) for s in ("data", "hardware", "target")},
}
