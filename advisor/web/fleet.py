"""The fleet page (staff only): every device, its worker, running job, fair-share queue and recent failures,
updated live by htmx; draining a device (its worker ends its job and takes no more) and undraining it."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from advisor import fleet, queries
from advisor.web.auth import HtmxHttpRequest, login_required, visible
from advisor.web.partial import page_or_fragment


def _staff(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied("the fleet page is for staff")


@require_GET
@login_required
def fleet_page(request: HtmxHttpRequest) -> HttpResponse:
    _staff(request)
    return page_or_fragment(request, "advisor/fleet.html", "devices", {"rows": fleet.fleet()})


@require_POST
@login_required
def drain(request: HtmxHttpRequest, pk: str) -> HttpResponse:
    _staff(request)
    device = visible(queries.device(pk), "device")
    if request.POST.get("action") == "undrain":
        fleet.undrain(device=device)
    else:
        fleet.drain(device=device)
    if request.htmx:
        return page_or_fragment(request, "advisor/fleet.html", "devices", {"rows": fleet.fleet()})
    return redirect("fleet")
