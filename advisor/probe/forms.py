"""Forms of the probe pages: shapes only; the services check the rest."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.core.validators import MaxValueValidator

from advisor.engine.units import plural, shape
from advisor.probe import conf
from advisor.probe.learning.samples import DEMOS, Demo


class SampleForm(forms.Form):
    file = forms.FileField(required=False, allow_empty_file=True, label="Data sample (CSV, NPZ, NPY or ZIP)")
    demo = forms.ChoiceField(
        required=False,
        label="or a bundled demo data set",
        choices=[("", "—")] + [(k, v["title"]) for k, v in DEMOS.items()],
    )
    name = forms.CharField(required=False, max_length=200)
    label_column = forms.CharField(required=False, max_length=200, label="Label column (CSV)")

    def __init__(self, *args: Any, spec: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if spec:  # say which bundled sets have this task's shape and outputs
            data = spec.get("data") or {}

            def fits(demo: Demo) -> bool:
                mine = demo["spec"]["data"]
                return bool(
                    mine["input_shape"] == data.get("input_shape") and mine["outputs"] == data.get("outputs")
                )

            self.fields["demo"].choices = [("", "—")] + [  # type: ignore[attr-defined]
                (k, v["title"] + (" — fits this task" if fits(v) else "")) for k, v in DEMOS.items()
            ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if bool(data.get("file") is not None) == bool(data.get("demo")):
            raise forms.ValidationError("Choose a file or a demo data set (one of the two).")
        return data


class OptionsWithReasons(forms.Select):
    """A select whose `disabled` options (value -> why) cannot be chosen: the reason is in their text, read
    before anyone submits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.disabled: set[object] = set()

    def create_option(self, name: str, value: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option: dict[str, Any] = super().create_option(name, value, *args, **kwargs)
        if value in self.disabled:
            option["attrs"]["disabled"] = True
        return option


class ProbeForm(forms.Form):
    sample = forms.TypedChoiceField(coerce=int, label="Sample", widget=OptionsWithReasons)
    device = forms.ChoiceField(label="Device")
    time_limit_seconds = forms.IntegerField(min_value=1, label="Time limit (s)")

    def __init__(
        self,
        *args: Any,
        samples: list[Any],
        devices: list[Any],
        misfits: dict[int, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """`misfits`: sample id -> why that sample cannot be probed here; shown, not choosable."""
        super().__init__(*args, **kwargs)
        misfits = misfits or {}
        sample = cast(forms.TypedChoiceField, self.fields["sample"])
        sample.choices = [
            (
                s.pk,
                f"{s.name}: {plural(s.examples, 'example')} of {shape(s.input_shape)}"
                + (f" (does not fit: {misfits[s.pk]})" if s.pk in misfits else ""),
            )
            for s in samples
        ]
        if samples and all(s.pk in misfits for s in samples):  # shown as chosen: a blank select says nothing
            sample.choices = [("", "— none of your samples fits this task —"), *sample.choices]
        cast(OptionsWithReasons, sample.widget).disabled = set(misfits)
        if self.initial.get("sample") in misfits or "sample" not in self.initial:
            fitting = [s.pk for s in samples if s.pk not in misfits]
            self.initial["sample"] = fitting[0] if fitting else ""
        cast(forms.ChoiceField, self.fields["device"]).choices = [
            (d.id, f"{d.id} — {d.name}") for d in devices
        ]
        limit = cast(forms.IntegerField, self.fields["time_limit_seconds"])
        limit.initial = conf.value("PROBE_DEFAULT_SECONDS")
        limit.max_value = conf.value("PROBE_MAX_SECONDS")
        limit.validators.append(MaxValueValidator(limit.max_value))
