from __future__ import annotations

from django.apps import AppConfig


class AdvisorConfig(AppConfig):
    name = "advisor"
    verbose_name = "Network-selection advisor"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not in advisor/__init__.py, so `import advisor.engine` in a plain script stays
        # free of Celery and Django; the web process needs the app configured before it sends a task.
        from advisor import celery  # noqa: F401
