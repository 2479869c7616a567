"""`python manage.py profile_device [--device cpu|cuda:N]`: measure this host's device for the time model
(advisor.calibration.profile, under the calibrations' allocator), store it on its `Device`, print it."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from advisor import devices, profiles, workers
from advisor.models import Device


class Command(BaseCommand):
    help = "Profile this host's CPU or a GPU for the time estimates and store it on its Device."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--device", default="cpu", help="cpu (default) or cuda:N")
        parser.add_argument("--host", default=devices.this_host())
        parser.add_argument("--threads", default="", help="CPU thread counts, e.g. 1,2 (default 1..cores)")

    def handle(self, *args: Any, **options: Any) -> None:
        from advisor.calibration import local_device
        from advisor.calibration.profile import profile_in_child

        tag, found = local_device(str(options["device"]))
        if not found:
            raise CommandError(f"no device {options['device']!r} on this machine")
        ident = f"{options['host']}-{tag}"
        device = Device.objects.filter(pk=ident).first()
        if device is None:  # not announced by a worker yet: register it (no worker: shown offline soon)
            device = workers.register_devices(host=options["host"], worker="", devices=found)[0]
        try:
            threads = [int(t) for t in options["threads"].split(",") if t] or None
            profile = profile_in_child(str(options["device"]), threads=threads)
        except (RuntimeError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        device = profiles.record_profile(device=device, profile=profile)
        stored = device.profile or {}
        self.stdout.write(json.dumps({"device": device.pk, **stored}, indent=1))
        said = [r["code"] for r in profile.get("unreliable_reasons") or []]
        self.stderr.write(
            f"profiled {device.pk} ({profile['processor']}) in {profile['seconds']:.1f} s"
            + (f", under contention ({', '.join(said)}): not trusted" if said else "")
            + f"; its estimates read the median of {stored.get('merged', 1)} trusted profile(s)"
        )
