from __future__ import annotations

from django.apps import AppConfig


class ProbeConfig(AppConfig):
    name = "advisor.probe"
    label = "probe"
    verbose_name = "Accuracy probe"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from advisor import workers
        from advisor.probe import running, services, signals  # noqa: F401  (signals connects receivers)

        # Probes share the device queues with calibrations: the worker's heartbeat looks after both.
        workers.register_job_kind(
            workers.JobKind("probe", reap_orphans=running.reap_orphans, resend_unsent=services.resend_unsent)
        )
