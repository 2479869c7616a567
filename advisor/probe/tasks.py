"""Celery tasks of the probe: thin. The worker consumes the device queues; probe jobs share them with
calibrations, so a device runs one job of either kind at a time."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import close_old_connections

from advisor.probe import running

log = logging.getLogger(__name__)


@shared_task(name="advisor.run_probe", acks_late=True, reject_on_worker_lost=True)
def run_probe(job_id: int) -> str:
    return running.run_probe_job(job_id=job_id)


@worker_ready.connect
def _look_after_probes(sender: Any = None, **_: Any) -> None:
    """On a worker's start its devices' running probes are orphans (one job per device at a time); while it
    lives, probes another worker left behind are recovered and unsent ones resent, like calibrations."""
    from advisor.models import Device
    from advisor.probe.services import resend_unsent

    try:
        queues = list(sender.app.amqp.queues.consume_from or {})
    except AttributeError:
        return
    ids = list(Device.objects.filter(queue__in=queues).values_list("id", flat=True))
    if not ids:
        return
    running.reap_orphans(device_ids=ids, stale_after=0)
    period = settings.WORKER_HEARTBEAT_SECONDS
    stale_after = max(30.0, 6 * period)

    def beat() -> None:
        stop = threading.Event()
        while not stop.wait(period):
            try:
                running.reap_orphans(device_ids=ids, stale_after=stale_after)
                resend_unsent(queues=queues)
            except Exception:  # the database or broker may be briefly away; the next beat tries again
                log.exception("probe upkeep failed")
            finally:
                close_old_connections()

    threading.Thread(target=beat, name="probe-upkeep", daemon=True).start()
