"""Forms: parse what the user typed into a TaskSpec or a calibration request. The spec's own rules stay in
the engine: these forms turn text into numbers and lists, then carry the engine's errors to their fields."""

from __future__ import annotations

import re
from typing import Any, cast

from django import forms

from advisor import engine
from advisor.engine.catalog import Transfer
from advisor.engine.fields import FIELDS, SECTIONS

TASK_CHOICES = [
    ("vision", "Vision — images"),
    ("tabular", "Tabular — rows of numbers"),
    ("sequence", "Sequence — data over time (audio, sensors, text)"),
    ("generation", "Generation — make new data"),
]
GOAL_CHOICES = [
    ("classify", "Classify — pick one of several classes"),
    ("regress", "Regress — predict numbers"),
    ("compress", "Compress — learn a smaller code of the input"),
]
GENERATION_CHOICES = [
    ("", "Decide from the data"),
    ("random", "Random — samples like the training data"),
    ("controlled", "Controlled — output follows a specification"),
    ("sequence", "Sequence — text, music, series"),
]
# Defaults first: a blank value (the engine's default) then shows as what the engine will use.
BYTES_CHOICES = [(4, "4 (float32)"), (2, "2 (float16)"), (1, "1 (uint8)"), (8, "8 (float64)")]

# Which wizard step shows which field (the engine's sections, advisor/engine/fields.py); every other field
# travels along hidden.
STEPS: list[tuple[str, str, tuple[str, ...]]] = [
    ("task", "Task", tuple(f.name for f in FIELDS if f.section == "")),
    ("data", "Data", SECTIONS["data"]),
    ("hardware", "Hardware", SECTIONS["hardware"]),
    ("target", "Targets", SECTIONS["target"]),
]
STEP_NAMES = [name for name, _, _ in STEPS]
# Fields that belong to some tasks only (fields.py, `SpecField.tasks`): the wizard hides them for the others
# and does not send them (a generation task has no goal, outputs or accuracy target: an accuracy of 0.98
# widened its GAN; a vocabulary is for token sequences).
ONLY_FOR_TASKS: dict[str, tuple[str, ...]] = {f.name: f.tasks for f in FIELDS if f.tasks}


def applies(field: str, task: str | None) -> bool:
    """Whether the wizard shows and sends `field` for `task` (every field while no task is chosen)."""
    return not task or field not in ONLY_FOR_TASKS or task in ONLY_FOR_TASKS[field]


# The TaskSpec section of each field ("" = top level).
SECTION_OF = {field: ("" if step == "task" else step) for step, _, fields in STEPS for field in fields}


def step_of(field: str) -> str:
    return next(name for name, _, fields in STEPS if field in fields)


def parse_int_list(text: str) -> list[int]:
    """'1, 28, 28', '1x28x28' or '[1, 28, 28]' -> [1, 28, 28]; ValueError on anything else."""
    parts = [p for p in re.split(r"[\s,x\u00d7\[\]()]+", text.strip()) if p]
    if not parts or not all(re.fullmatch(r"\d+", p) for p in parts):
        raise ValueError(text)
    return [int(p) for p in parts]


class IntListField(forms.CharField):
    def __init__(self, *, example: str, **kwargs: Any) -> None:
        self.example = example
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> list[int] | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        try:
            return parse_int_list(text)
        except ValueError:
            raise forms.ValidationError(
                f"write whole numbers separated by commas, e.g. {self.example}", code="invalid"
            ) from None


def _gpu_choices() -> list[tuple[str, str]]:
    return [("", "None — CPU only")] + [
        (g["id"], f"{g['name']} ({g['memory_gb']} GB)") for g in engine.gpu_catalog()
    ]


def _catalog_choices(entries: list[Transfer], default: str) -> list[tuple[str, str]]:
    ordered = sorted(entries, key=lambda e: e["id"] != default)
    return [(e["id"], f"{e['name']} ({e['gbps']:g} GB/s)") for e in ordered]


class SpecForm(forms.Form):
    """Every TaskSpec field as the wizard shows it. Nothing is required: the engine says what is missing."""

    task = forms.ChoiceField(choices=TASK_CHOICES, widget=forms.RadioSelect, required=False)
    generation = forms.ChoiceField(choices=GENERATION_CHOICES, required=False, label="Kind of generation")
    goal = forms.ChoiceField(choices=GOAL_CHOICES, widget=forms.RadioSelect, required=False)
    examples = forms.IntegerField(required=False, label="Training examples", help_text="e.g. 60000")
    input_shape = IntListField(
        required=False,
        example="1, 28, 28",
        label="Shape of one example",
        help_text="vision: channels, height, width · tabular: features · sequence: steps, features "
        "(with a vocabulary: steps)",
    )
    vocab_size = forms.IntegerField(required=False, label="Vocabulary size", help_text="token sequences only")
    outputs = forms.IntegerField(required=False, label="Outputs", help_text="classes, or values to predict")
    labelled_fraction = forms.FloatField(
        required=False, label="Labelled fraction", help_text="0 to 1: share of examples with labels"
    )
    bytes_per_value = forms.TypedChoiceField(
        choices=BYTES_CHOICES, coerce=int, required=False, label="Bytes per value"
    )
    cpu_cores = forms.IntegerField(required=False, label="Physical CPU cores")
    cpu_threads = forms.IntegerField(required=False, label="Logical CPU threads", help_text="blank: = cores")
    ram_gb = forms.FloatField(required=False, label="RAM (GB)")
    gpu = forms.ChoiceField(choices=_gpu_choices, required=False, label="GPU")
    gpus_per_node = forms.IntegerField(required=False, label="GPUs per node", help_text="blank: 1 with a GPU")
    gpu_memory_gb = forms.FloatField(
        required=False, label="GPU memory override (GB)", help_text="blank: the catalog's"
    )
    nodes = forms.IntegerField(required=False, label="Nodes")
    link = forms.ChoiceField(
        choices=lambda: _catalog_choices(engine.link_catalog(), "pcie3"),
        required=False,
        label="Host to GPU link",
    )
    storage = forms.ChoiceField(
        choices=lambda: _catalog_choices(engine.storage_catalog(), "ssd"), required=False, label="Storage"
    )
    accuracy = forms.FloatField(required=False, label="Accuracy target", help_text="0 to 1, e.g. 0.98")
    two_sample = forms.FloatField(
        required=False,
        label="Two-sample score target",
        help_text="generation only: 0 to 1, 1 = a classifier cannot tell generated from real",
    )
    time_budget_hours = forms.FloatField(required=False, label="Time budget (hours)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            described = f"err-{name}" + (f" help-{name}" if field.help_text else "")
            field.widget.attrs.setdefault("aria-describedby", described)
            if isinstance(field, forms.FloatField):
                field.widget.attrs.setdefault("step", "any")

    def to_spec(self) -> dict[str, Any]:
        """The TaskSpec from the cleaned fields (call after is_valid()); blanks become absent (None)."""
        values = {name: self.cleaned_data.get(name) for name in self.fields}
        spec: dict[str, Any] = {"data": {}, "hardware": {}, "target": {}}
        for name, value in values.items():
            if value == "" or value is None:
                value = None
            section = SECTION_OF[name]
            if section:
                spec[section][name] = value
            else:
                spec[name] = value
        for field in FIELDS:
            if not field.applies(spec.get("task")):
                # it stays on the page when the task changes, but belongs to other tasks (fields.py)
                (spec[field.section] if field.section else spec)[field.name] = None
        return spec

    def spec_errors(self) -> dict[str, list[str]]:
        """Parse errors first; then the engine's own errors, by dotted path, for fields that parsed."""
        self.is_valid()
        try:
            engine.normalise(self.to_spec())
        except engine.SpecError as exc:
            return self.field_errors(exc.errors)
        return self.field_errors({})

    def field_errors(self, engine_errors: dict[str, list[str]]) -> dict[str, list[str]]:
        """The form's parse errors, then the engine's by field ('data.input_shape' -> input_shape); a path
        that is no field (a whole section) goes to '__all__' with its path."""
        task = (self.cleaned_data if hasattr(self, "cleaned_data") else {}).get("task")
        errors: dict[str, list[str]] = {
            name: [str(m) for m in msgs]
            for name, msgs in self.errors.items()
            if applies(name, task)  # what is not sent cannot be wrong
        }
        for path, messages in engine_errors.items():
            name = path.rsplit(".", 1)[-1]
            key = name if name in self.fields else "__all__"
            if key in self.errors:
                continue  # the parse error already says it; the engine only saw a blank
            errors.setdefault(key, []).extend(
                messages if key != "__all__" else [f"{path}: {m}" for m in messages]
            )
        return errors


def initial_from_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Form initial values from a (possibly partial) TaskSpec."""
    initial: dict[str, Any] = {}
    for name, section in SECTION_OF.items():
        source = spec.get(section, {}) if section else spec
        value = (source or {}).get(name)
        if value is None:
            continue
        initial[name] = ", ".join(str(v) for v in value) if isinstance(value, list) else value
    return initial


class CalibrateForm(forms.Form):
    candidate = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    device = forms.ChoiceField(label="Device", choices=[])
    batch_sizes = IntListField(
        required=False,
        example="32, 64",
        label="Batch sizes",
        help_text="blank: doubling from the recommended size",
    )
    threads = IntListField(
        required=False, example="1, 2", label="Threads", help_text="blank: 1 up to the device's cores"
    )
    time_limit_seconds = forms.IntegerField(
        required=False, min_value=1, label="Time limit (s)", help_text="blank: the server's default"
    )
    # One key per rendered form: a double click or a resubmitted page queues the job once.
    key = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args: Any, devices: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["device"]).choices = [
            (d.id, f"{d.name} ({d.id})") for d in devices
        ]
        for name, field in self.fields.items():
            field.widget.attrs.setdefault("aria-describedby", f"cal-err-{name}")
