"""Stored estimates whose basis is "analytic" (recommendations made before device profiles, and the estimates
copied from them into calibrations and probes) say "catalog": the same figure under its current name. No
version had been released, so the old name is not read any more (docs/CONTRACT.md, pre-release corrections).
Not reversible: which rows said "analytic" is not kept."""

from __future__ import annotations

from typing import Any

from django.apps.registry import Apps
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

# (app, model, its JSON fields that hold estimates, at any depth)
STORED = (
    ("advisor", "Recommendation", ("result",)),
    ("advisor", "CalibrationJob", ("estimate",)),
    ("probe", "ProbeJob", ("results", "verdict")),
)


def _renamed(value: Any) -> tuple[Any, bool]:
    """The value with every {"basis": "analytic"} inside it saying "catalog", and whether anything changed."""
    if isinstance(value, list):
        pairs = [_renamed(item) for item in value]
        return [item for item, _ in pairs], any(changed for _, changed in pairs)
    if not isinstance(value, dict):
        return value, False
    inner = {key: _renamed(item) for key, item in value.items()}
    out = {key: item for key, (item, _) in inner.items()}
    changed = any(c for _, c in inner.values())
    if out.get("basis") == "analytic":
        out["basis"], changed = "catalog", True
    return out, changed


def rename(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    for app, name, fields in STORED:
        model = apps.get_model(app, name)
        for row in model.objects.only("pk", *fields).iterator():
            updates = {}
            for field in fields:
                value, changed = _renamed(getattr(row, field))
                if changed:
                    updates[field] = value
            if updates:
                model.objects.filter(pk=row.pk).update(**updates)


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0003_device_profile"),
        ("probe", "0001_initial"),
    ]

    operations = [migrations.RunPython(rename, migrations.RunPython.noop)]
