from __future__ import annotations

from django.apps import AppConfig


class ProbeConfig(AppConfig):
    name = "advisor.probe"
    label = "probe"
    verbose_name = "Accuracy probe"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from advisor.probe import signals  # noqa: F401  (signals connects receivers)
