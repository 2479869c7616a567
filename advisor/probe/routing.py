"""The `<pid:pk>` URL converter of the probe's routes, registered once (both URL modules import this)."""

from __future__ import annotations

from django.urls import register_converter

from advisor.ids import IdConverter

register_converter(IdConverter, "pid")  # ids that fit a 64-bit key; larger numbers are 404, not a 500
