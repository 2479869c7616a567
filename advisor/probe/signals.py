"""A sample's file goes with its row, however the row goes (deleted on its own or with its owner)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from advisor.probe.models import DataSample


@receiver(post_delete, sender=DataSample)
def _remove_file(sender: type[DataSample], instance: DataSample, **_: Any) -> None:
    path = instance.file
    transaction.on_commit(lambda: path.unlink(missing_ok=True))  # not before: a rolled-back delete keeps it
