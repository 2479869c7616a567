"""`python manage.py advise SPEC.json` (or `-` for stdin): print the Recommendation as JSON; with `--code
DIR`, also write each candidate's code (model.py, train.py, README.md: advisor/export) under DIR/<index>/."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from advisor import advice, devices, engine, export
from advisor.contract import Recommendation


class Command(BaseCommand):
    help = (
        "Recommend a network for the TaskSpec in SPEC.json ('-' reads stdin), timed from --device's profile "
        "when given; exit 2 on bad input or an unknown device."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("spec", help="path to a TaskSpec JSON file, or - for standard input")
        parser.add_argument(
            "--device",
            default=None,
            help="cpu, cuda:N (this host's) or a device id: time the network from that device's profile",
        )
        parser.add_argument(
            "--code",
            type=Path,
            default=None,
            metavar="DIR",
            help="write each candidate's code (model.py, train.py, README.md) under DIR/<candidate index>/",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["spec"]
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            self._fail({"spec": [f"cannot read {path}: {exc.strerror}"]})
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            self._fail({"spec": [f"not valid JSON: {exc}"]})
        device = None
        if options["device"] is not None:
            try:
                device = devices.resolve(options["device"])
            except devices.UnknownDevice as exc:
                self._fail(exc.errors)
        try:
            result = advice.recommend(spec, device)
        except engine.SpecError as exc:
            self._fail(exc.errors)
        self.stdout.write(json.dumps(result, indent=2))
        if options["code"] is not None:
            write_code(result, options["code"])

    def _fail(self, errors: dict[str, list[str]]) -> None:
        sys.stderr.write(json.dumps(errors, indent=2) + "\n")
        sys.exit(2)


def write_code(recommendation: Recommendation, folder: Path) -> None:
    for index in range(len(recommendation["candidates"])):
        where = folder / str(index)
        where.mkdir(parents=True, exist_ok=True)
        for name, text in export.files(export.Download(recommendation, index)).items():
            (where / name).write_text(text, encoding="utf-8")
