"""`python manage.py worker [--device cpu|cuda:N]`: announce this machine's device, then consume only its
queue, one job at a time, beating a heartbeat and recovering jobs a dead worker left running."""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections
from django.utils import timezone

from advisor import profiling, workers
from advisor.celery import app
from advisor.devices import this_host

log = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Start a Celery worker for one device (its own queue, concurrency 1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--device", default="cpu", help="cpu (default) or cuda:N")
        parser.add_argument("--host", default=this_host())
        parser.add_argument("--loglevel", default="INFO")

    def handle(self, *args: Any, **options: Any) -> None:
        import torch

        from advisor.calibration import local_device
        from advisor.calibration.devices import DetectedDevice

        tag, found = local_device(str(options["device"]))
        if not found:
            raise CommandError(f"no device {options['device']!r} on this machine")
        host = options["host"]
        worker_name = f"{tag}@{host}"
        announced: list[DetectedDevice] = [
            {**d, "torch": torch.__version__} for d in found
        ]  # the fleet page's
        devices = workers.register_devices(host=host, worker=worker_name, devices=announced)
        ids = [d.id for d in devices]
        queues = [d.queue for d in devices]
        workers.upkeep(device_ids=ids, queues=queues, stale_after=0)
        close_old_connections()
        # beating before profiling: a device being profiled is online (jobs sent now wait in its queue);
        # without it the device looked offline for the profile's 10-70 s and submissions were refused
        beat = threading.Thread(target=_beat, args=(ids, queues), name="device-heartbeat", daemon=True)
        beat.start()
        if settings.WORKER_PROFILE_DEVICES:  # before taking jobs: never while one runs
            profiling.profile_devices(devices)
            close_old_connections()
        self.stdout.write(f"worker {worker_name}: device {ids[0]} ({devices[0].name}) on queue {queues[0]}")
        app.worker_main(
            [
                "worker",
                "--queues",
                ",".join(queues),
                "--concurrency",
                "1",
                # The task runs in the worker's main process: the measuring child it starts must not be a
                # grandchild under a daemonic pool process (multiprocessing forbids that), and one job at a
                # time per device is the point anyway. The runner enforces each job's time limit itself.
                "--pool",
                "solo",
                "--hostname",
                worker_name,
                "--loglevel",
                options["loglevel"],
                "--without-gossip",
                "--without-mingle",
            ]
        )


def _beat(device_ids: list[str], queues: list[str]) -> None:
    period = settings.WORKER_HEARTBEAT_SECONDS
    stale_after = max(30.0, 6 * period)
    stop = threading.Event()
    sent: dict[str, float] = {}  # when this worker last asked each device to be profiled again
    while not stop.wait(period):
        try:
            workers.upkeep(device_ids=device_ids, queues=queues, stale_after=stale_after)
            if settings.WORKER_PROFILE_DEVICES:  # the profile again, as a task between jobs, when idle
                workers.reprofile_idle(
                    device_ids=device_ids,
                    now=timezone.now(),
                    every=settings.WORKER_REPROFILE_SECONDS,
                    sent=sent,
                )
        except Exception:  # the database or broker may be briefly away; the next beat tries again
            log.exception("heartbeat failed")
        finally:
            close_old_connections()
