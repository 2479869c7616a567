"""What a device's worker does with a message: claim the next job of its device by the fair-share rule
(advisor/queueing.py), not necessarily the one the message names, and run it with its kind's runner.

Every submission still publishes one message to its device's queue (the outbox and the broker-down
behaviour are unchanged); each message claims at most one job with the kind's conditional UPDATE, so no job
runs twice, and as many messages as sent jobs arrive, so none is stranded. A message that finds nothing to
claim (its job cancelled, or taken by an earlier message) does nothing. A drained device claims nothing:
its jobs are published again when staff undrain it (advisor/fleet.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from advisor import queueing, running
from advisor.models import Device
from advisor.probe import running as probe_running

log = logging.getLogger(__name__)

RUNNERS: dict[str, Callable[..., str]] = {
    "calibration": running.run_calibration_job,
    "probe": probe_running.run_probe_job,
}


def run_next(kind: str, job_id: int) -> str:
    """Handle one message of `kind` for `job_id`: run the device's next job by the rule. Returns its final
    status, 'drained', or 'skipped' when there was nothing to claim."""
    model = queueing.KINDS[kind]
    device_id = model._default_manager.filter(pk=job_id).values_list("device_id", flat=True).first()
    if device_id is None:
        return "skipped"
    if Device.objects.filter(pk=device_id, draining=True).exists():
        log.info("%s is drained: %s %s stays queued until it is undrained", device_id, kind, job_id)
        return "drained"
    for next_kind, pk in queueing.claim_order(str(device_id), hint=(kind, job_id)):
        status = RUNNERS[next_kind](job_id=pk)
        if status != "skipped":
            return status
    return "skipped"
