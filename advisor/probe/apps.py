from __future__ import annotations

from django.apps import AppConfig


class ProbeConfig(AppConfig):
    name = "advisor.probe"
    label = "probe"
    verbose_name = "Accuracy probe"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from advisor import services as advisor_services
        from advisor import workers
        from advisor.probe import running, services, signals  # noqa: F401  (signals connects receivers)

        # A recommendation's candidates carry what their latest probe measured (score, time to the target).
        advisor_services.CANDIDATE_EXTRAS["accuracy_probe"] = services.latest_probe_estimates
        # Probes share the device queues with calibrations: the worker's heartbeat looks after both.
        workers.register_job_kind(
            workers.JobKind("probe", reap_orphans=running.reap_orphans, resend_unsent=services.resend_unsent)
        )
