"""The TaskSpec's fields are declared once (advisor/engine/fields.py): the engine accepts exactly those, the
API's serializer and the wizard's form are made of exactly those."""

from __future__ import annotations

import pytest

from advisor import engine
from advisor.api.spec import TaskSpecSerializer
from advisor.engine.fields import FIELDS, SECTIONS, SpecField
from advisor.web.forms import STEPS, SpecForm

SPEC = {
    "task": "tabular",
    "data": {"examples": 1000, "input_shape": [8], "outputs": 2},
    "hardware": {"cpu_cores": 2, "ram_gb": 4},
}


def test_it_makes_the_serializer_from_the_declaration() -> None:
    fields = TaskSpecSerializer().fields
    assert list(fields) == list(SECTIONS[""])
    for section in ("data", "hardware", "target"):
        declared = [f for f in FIELDS if f.section == section]
        made = fields[section].fields
        assert list(made) == [f.name for f in declared]
        assert [made[f.name].required for f in declared] == [f.required for f in declared]


def test_it_shows_every_declared_field_in_the_wizard() -> None:
    assert set(SpecForm.base_fields) == {f.name for f in FIELDS}
    assert sorted(name for _, _, names in STEPS for name in names) == sorted(f.name for f in FIELDS)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.path)
def test_it_knows_each_declared_field_and_no_other(field: SpecField) -> None:
    path = field.path
    section, _, name = path.rpartition(".")
    unknown = (
        {**SPEC, section: {**SPEC.get(section, {}), name + "_typo": 1}}
        if section
        else {**SPEC, path + "_typo": 1}
    )
    with pytest.raises(engine.SpecError) as refused:
        engine.normalise(unknown)
    assert f"{path}_typo" in refused.value.errors
