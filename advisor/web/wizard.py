"""The wizard: task, data, hardware, targets. Plain forms without JavaScript; with htmx each step swaps in
place, every field is checked against the engine as the user types, and the first candidate is previewed."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from advisor import advice, engine, queries, services
from advisor.accounts import signed_in
from advisor.contract import TaskSpec
from advisor.devices import preselected
from advisor.engine.units import TIMES
from advisor.models import Device
from advisor.web.auth import HtmxHttpRequest, login_required
from advisor.web.examples import (
    DEFAULT_EXAMPLE,
    EXAMPLES,
    default_spec,
    hardware_from_device,
    reshape_for_task,
)
from advisor.web.forms import STEP_NAMES, STEPS, SpecForm, initial_from_spec, step_of
from advisor.web.pagedata import CandidateView
from advisor.web.partial import wants_fragment
from advisor.web.present import candidate_view, diagrams, family_title

TEMPLATE = "advisor/wizard.html"
# Whole processors of the engine's catalog (its per-core entry describes no machine).
CATALOG_CPUS = {cpu["id"]: cpu for cpu in engine.cpu_catalog() if cpu["cores"] > 1}


@require_http_methods(["GET", "POST"])
@login_required
def wizard(request: HtmxHttpRequest) -> HttpResponse:
    devices = queries.online_devices()
    if request.method == "GET":
        example = request.GET.get("example", DEFAULT_EXAMPLE)
        spec = default_spec(devices, example)
        # "Your hardware stays": a new task starts on the hardware of the user's last one.
        spec["hardware"] = queries.latest_hardware(request.user) or spec["hardware"]
        form = SpecForm(initial=initial_from_spec(spec))
        step = request.GET.get("step", "task")
        return _render(request, form, step if step in STEP_NAMES else "task", {}, devices, spec)

    data = request.POST.copy()
    asked = data.get("step") or ""
    current = asked if asked in STEP_NAMES else "task"
    go = data.get("go", "")
    if data.get("example") in EXAMPLES:
        # An example replaces the task and data steps and keeps the hardware the user set.
        chosen = initial_from_spec({**EXAMPLES[str(data["example"])]["spec"], "hardware": {}})
        for name in (*STEPS[0][2], *STEPS[1][2], *STEPS[3][2]):
            data[name] = str(chosen.get(name, ""))
        data["shaped_for"] = str(chosen.get("task", ""))
        go = "task"
    reshape_for_task(data)
    cpu = CATALOG_CPUS.get(data.get("use_cpu", ""))
    if cpu is not None:
        data["cpu_cores"], data["cpu_threads"] = str(cpu["cores"]), str(cpu["threads"])
        go = "hardware"
    device = queries.device(str(data.get("use_device", "")))
    if device is not None:
        for name in STEPS[2][2]:
            data[name] = ""
        for name, value in initial_from_spec({"hardware": hardware_from_device(device)}).items():
            data[name] = str(value)
        go = "hardware"

    form = SpecForm(data)
    errors = form.spec_errors()
    status, blocked = 200, ""
    if go == "recommend":
        if not errors:
            try:
                spec = form.to_spec()
                timed_on = preselected(devices, spec)
                rec = services.advise(owner=signed_in(request.user), spec=spec, device=timed_on)
            except engine.SpecError as exc:  # a rule beyond the spec's own checks refused it
                errors = form.field_errors(exc.errors)
            else:
                url = reverse("recommendation", args=[rec.pk])
                return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
        # htmx swaps only a 200: the form with its errors is the answer, not a failed request (a 400 would be
        # logged as an error in the browser's console and not shown); without JavaScript a 400 says it
        step, status = _first_step_with_errors(errors), 200 if request.htmx else 400
        where = ", ".join(_labels_with_errors(errors)) or "the steps"
        blocked = f"Fix the marked fields before the recommendation: they are in {where}."
    elif go in STEP_NAMES:
        forward = STEP_NAMES.index(go) > STEP_NAMES.index(current)
        step = current if forward and _step_errors(errors, current) else go
        if step != go:
            marked = "fields" if len(_step_fields_with_errors(errors, current)) > 1 else "field"
            target = dict((n, label) for n, label, _ in STEPS)[go]
            blocked = f"Fix the marked {marked} of this step before going on to {target}."
    else:
        step = current
    return _render(request, form, step, errors, devices, None, status=status, blocked=blocked)


@require_POST
@login_required
def wizard_check(request: HttpRequest) -> HttpResponse:
    """htmx: the engine's errors for the fields of the shown step (out of band) and the live preview."""
    data = request.POST.copy()
    reshape_for_task(data)  # the preview sees the shape the next step will show
    form = SpecForm(data)
    errors = form.spec_errors()
    asked = request.POST.get("step") or ""
    step = asked if asked in STEP_NAMES else "task"
    context = _context(form, step, errors, queries.online_devices(), None)
    return render(request, f"{TEMPLATE}#check", context)


def _step_errors(errors: dict[str, list[str]], step: str) -> bool:
    return bool(_step_fields_with_errors(errors, step))


def _step_fields_with_errors(errors: dict[str, list[str]], step: str) -> list[str]:
    fields = dict((name, f) for name, _, f in STEPS)[step]
    return [name for name in fields if name in errors]


def _labels_with_errors(errors: dict[str, list[str]]) -> list[str]:
    return [
        f"{label} (step {i + 1})"
        for i, (_, label, fields) in enumerate(STEPS)
        if any(f in errors for f in fields)
    ]


def _first_step_with_errors(errors: dict[str, list[str]]) -> str:
    steps = [step_of(name) for name in errors if name != "__all__"]
    return min(steps, key=STEP_NAMES.index) if steps else "task"


def _render(
    request: HtmxHttpRequest,
    form: SpecForm,
    step: str,
    errors: dict[str, list[str]],
    devices: list[Device],
    spec: dict[str, Any] | None,
    status: int = 200,
    blocked: str = "",
) -> HttpResponse:
    """`blocked`: why the wizard did not do what was asked (go to a step, recommend); said at the top of
    the step, and the first marked field takes the focus."""
    context = _context(form, step, errors, devices, spec)
    context["blocked"] = blocked
    if blocked:
        first = next((field for field, field_errors in context["visible"] if field_errors), None)
        if first is not None:
            first.field.widget.attrs["autofocus"] = True
    if wants_fragment(request):
        return render(request, f"{TEMPLATE}#wizard", context, status=status)
    context["recent"] = queries.recent_recommendations(request.user)
    return render(request, TEMPLATE, context, status=status)


def _context(
    form: SpecForm,
    step: str,
    errors: dict[str, list[str]],
    devices: list[Device],
    spec: dict[str, Any] | None,
) -> dict[str, Any]:
    shown = dict((name, f) for name, _, f in STEPS)[step]
    index = STEP_NAMES.index(step)
    for name in errors:
        if name in form.fields:
            form.fields[name].widget.attrs["aria-invalid"] = "true"
    if spec is None and not errors:
        spec = form.to_spec()
    return {
        "form": form,
        "step": step,
        "step_label": STEPS[index][1],
        "step_number": index + 1,
        "steps": [
            {"name": n, "label": label, "current": n == step, "errors": any(f in errors for f in fields)}
            for n, label, fields in STEPS
        ],
        "previous": STEP_NAMES[index - 1] if index else None,
        "next": STEP_NAMES[index + 1] if index + 1 < len(STEP_NAMES) else None,
        "visible": [(form[name], errors.get(name, [])) for name in shown],
        "hidden": [form[name] for name in form.fields if name not in shown],
        "general_errors": errors.get("__all__", []),
        "examples": [(key, e["label"]) for key, e in EXAMPLES.items()],
        "devices": devices,
        "catalog_cpus": list(CATALOG_CPUS.values()),
        "preview": _preview(spec, preselected(devices, spec)) if spec is not None else None,
        "preview_blocked": bool(errors),
        # Where the errors are: the preview names the steps, not only "above" (the shown step may be fine).
        "error_steps": _labels_with_errors(errors),
        "shaped_for": form["task"].value() or "",
    }


def _preview(spec: dict[str, Any], device: Device | None) -> CandidateView | None:
    """The engine's first candidate for the spec so far, timed from the preselected device's profile; None
    while the spec is not yet valid."""
    try:
        result = advice.recommend(spec, device)
    except engine.SpecError:
        return None
    first = result["candidates"][0]
    view = candidate_view(0, first, first.get("estimate"))
    view["diagrams"] = diagrams(first)
    view["alternatives"] = [family_title(c["family"], c.get("depth")) for c in result["candidates"][1:]]
    view["plan"] = result.get("hardware_plan", {})
    view["summary"] = spec_summary(result["spec"])
    view["warnings"] = result["warnings"]
    return view


def spec_summary(spec: TaskSpec) -> list[tuple[str, str]]:
    """The normalised spec in a few words per step, so the user sees the steps they are not on."""
    data, hw, target = spec["data"], spec["hardware"], spec["target"]
    kind = (
        f"{spec['generation']} generation"
        if spec["task"] == "generation"
        else f"{spec['task']}, {spec['goal']}"
    )
    shape = TIMES.join(map(str, data["input_shape"]))
    gpu = f", {hw['gpus_per_node']} {TIMES} {hw['gpu']}" if hw["gpu"] else ", no GPU"
    goals = [f"accuracy {target['accuracy']:g}" if target["accuracy"] is not None else "",
             f"two-sample {target['two_sample']:g}" if target.get("two_sample") is not None else "",
             f"{target['time_budget_hours']:g} h budget" if target["time_budget_hours"] else ""]  # fmt: skip
    return [
        ("Task", kind),
        (
            "Data",
            f"{data['examples']:,} {TIMES} {shape}" + (f" → {data['outputs']}" if data["outputs"] else ""),
        ),
        (
            "Hardware",
            f"{hw['cpu_cores']} cores, {hw['ram_gb']:g} GB RAM{gpu}"
            + (f", {hw['nodes']} nodes" if hw["nodes"] > 1 else ""),
        ),
        ("Targets", ", ".join(g for g in goals if g) or "none given"),
    ]
