"""The pages through Django's test client: wizard as plain forms, results, history, compare, accounts."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor.models import CalibrationJob, Recommendation
from tests.web.conftest import finished_job

pytestmark = pytest.mark.django_db


def _wizard_post(client: Client, data: dict[str, Any], **extra: Any) -> Any:
    page = client.get("/")
    form = page.context["form"]
    values = {name: form[name].value() for name in form.fields}
    values = {k: ("" if v is None else v) for k, v in values.items()}
    return client.post("/", {**values, **data}, **extra)


def test_it_asks_anonymous_users_to_log_in() -> None:
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_it_logs_in_and_out(user: Any) -> None:
    client = Client()
    response = client.post("/accounts/login/", {"username": "ada", "password": "correct-horse-battery"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/").status_code == 302


@pytest.mark.parametrize("step", ["task", "data", "hardware", "targets"])
def test_it_leaks_no_template_syntax_on_any_wizard_step(client_for: Client, step: str) -> None:
    # A multi-line {# #} is not a Django comment: it was printed on the page as text.
    html = _wizard_post(client_for, {"go": step}).content.decode()
    assert not [token for token in ("{#", "#}", "{%", "%}", "{{", "}}") if token in html]


def test_it_shows_the_first_step_with_examples_and_a_preview(client_for: Client) -> None:
    page = client_for.get("/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "MNIST-like digits" in html and "ImageNet-like photos" in html and "Text generation" in html
    assert page.context["step"] == "task"
    assert page.context["preview"] is not None  # the default example is a valid spec


@pytest.mark.parametrize(
    ("example", "task", "shape"),
    [("mnist", "vision", "1, 28, 28"), ("speech", "sequence", "100, 40"), ("text", "generation", "64")],
)
def test_it_fills_the_task_from_an_example(client_for: Client, example: str, task: str, shape: str) -> None:
    response = _wizard_post(client_for, {"example": example, "step": "task"})
    form = response.context["form"]
    assert response.status_code == 200
    assert form["task"].value() == task and form["input_shape"].value() == shape


def test_it_walks_the_steps_without_javascript(client_for: Client) -> None:
    response = _wizard_post(client_for, {"step": "task", "go": "data"})
    assert response.context["step"] == "data"
    response = _wizard_post(client_for, {"step": "data", "go": "hardware"})
    assert response.context["step"] == "hardware"
    response = _wizard_post(client_for, {"step": "hardware", "go": "task"})
    assert response.context["step"] == "task"


def test_it_keeps_the_user_on_a_step_whose_fields_the_engine_rejects(client_for: Client) -> None:
    response = _wizard_post(
        client_for, {"task": "vision", "input_shape": "28, 28", "step": "data", "go": "hardware"}
    )
    assert response.context["step"] == "data"
    html = response.content.decode()
    assert "vision needs [channels, height, width]" in html  # the engine's own message, on its field
    assert 'id="err-input_shape"' in html and 'aria-invalid="true"' in html


def test_it_reports_text_that_is_not_a_shape_on_the_field(client_for: Client) -> None:
    response = _wizard_post(client_for, {"input_shape": "twenty", "step": "data", "go": "hardware"})
    assert response.context["step"] == "data"
    errors = dict(response.context["visible"][1:2])  # (field, errors) of input_shape
    assert any("separated by commas" in m for m in next(iter(errors.values())))


def test_it_sends_the_user_to_the_first_step_with_errors_on_submit(client_for: Client) -> None:
    response = _wizard_post(client_for, {"ram_gb": "-1", "step": "target", "go": "recommend"})
    assert response.status_code == 400
    assert response.context["step"] == "hardware"
    assert "must be above 0" in response.content.decode()
    assert not Recommendation.objects.exists()


@pytest.mark.parametrize(
    ("data", "family_in"),
    [
        ({"example": ""}, None),
        ({"task": "tabular", "input_shape": "16", "outputs": "3", "examples": "2000"}, None),
    ],
)
def test_it_stores_the_recommendation_and_shows_it(
    client_for: Client, user: Any, data: dict[str, str], family_in: Any
) -> None:
    response = _wizard_post(client_for, {**data, "step": "target", "go": "recommend"})
    assert response.status_code == 302
    rec = Recommendation.objects.get(owner=user)
    assert response["Location"] == f"/recommendations/{rec.pk}/"
    page = client_for.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    first = rec.result["candidates"][0]
    for reason in first["reasons"]:
        assert f'href="/rules/#rule-{reason["rule"]}"' in html
    assert "estimated" in html and "<svg" in html


@pytest.mark.parametrize(
    ("spec", "words", "not_words"),
    [
        (
            {
                "task": "generation",
                "data": {"examples": 2000, "input_shape": [2]},
                "target": {"two_sample": 0.8},
            },
            ["Check the generator on a sample", "two-sample target 0.8"],
            ["Check the accuracy target", "accuracy target 0.98"],
        ),
        (
            {"task": "tabular", "data": {"examples": 2000, "input_shape": [8], "outputs": 3}},
            ["Check the accuracy target on a sample"],
            ["Check the generator", "two-sample target"],
        ),
    ],
)
def test_it_names_the_target_the_task_has(
    client_for: Client, user: Any, spec: dict[str, Any], words: list[str], not_words: list[str]
) -> None:
    from advisor import services

    rec = services.advise(owner=user, spec={**spec, "hardware": {"cpu_cores": 2, "ram_gb": 8}})
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert all(w in html for w in words) and not any(w in html for w in not_words)


def test_it_shows_every_candidate_on_request(client_for: Client, rec: Any) -> None:
    n = len(rec.result["candidates"])
    for i in range(n):
        page = client_for.get(f"/recommendations/{rec.pk}/?c={i}")
        assert page.status_code == 200 and page.context["chosen"]["index"] == i


def test_it_hides_other_users_rows_and_shows_staff_all(
    client_for: Client, rec: Any, other_user: Any, device: Any
) -> None:
    job = finished_job(rec, device)
    stranger = Client()
    stranger.force_login(other_user)
    assert stranger.get(f"/recommendations/{rec.pk}/").status_code == 404
    assert stranger.get(f"/calibrations/{job.pk}/").status_code == 404
    assert stranger.post(f"/calibrations/{job.pk}/cancel/").status_code == 404
    assert f"#{rec.pk}" not in stranger.get("/history/").content.decode()
    other_user.is_staff = True
    other_user.save()
    assert stranger.get(f"/recommendations/{rec.pk}/").status_code == 200
    assert f'href="/recommendations/{rec.pk}/"' in stranger.get("/history/").content.decode()


def test_it_queues_a_calibration_from_the_form(client_for: Client, rec: Any, device: Any) -> None:
    data = {"candidate": 0, "device": device.id, "batch_sizes": "32", "threads": "1", "key": "k1"}
    response = client_for.post(f"/recommendations/{rec.pk}/calibrate/", data)
    job = CalibrationJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/calibrations/{job.pk}/"
    assert job.batch_sizes == [32] and job.threads == [1] and job.device_id == device.id
    again = client_for.post(f"/recommendations/{rec.pk}/calibrate/", data)  # a double click
    assert again["Location"] == response["Location"] and CalibrationJob.objects.count() == 1


def test_it_shows_the_services_refusal_on_the_calibrate_form(
    client_for: Client, rec: Any, device: Any
) -> None:
    data = {"candidate": 0, "device": device.id, "batch_sizes": "32", "threads": "64"}
    response = client_for.post(f"/recommendations/{rec.pk}/calibrate/", data)
    assert response.status_code == 400
    assert "each thread count must be an integer from 1 to 2" in response.content.decode()
    assert not CalibrationJob.objects.exists()


def test_it_shows_measured_results_with_plots_and_failures(client_for: Client, rec: Any, device: Any) -> None:
    job = finished_job(rec, device)
    html = client_for.get(f"/calibrations/{job.pk}/").content.decode()
    assert "Time per batch vs threads" in html and "Time per batch vs batch size" in html
    assert "Examples per second" in html and html.count("<polyline") == 2
    assert "oom: does not fit" in html
    from advisor import engine
    from advisor.engine.units import duration

    at_32 = engine.estimate_for(rec.result, 0, batch_size=32)  # the measured batch, not the recommended 64
    assert rec.result["candidates"][0]["training"]["batch_size"] != 32
    assert "Catalog estimate (batch 32)" in html and duration(at_32["seconds_per_batch"]) in html
    assert 'class="badge measured"' in html and "hx-get" not in html.split('id="job-status"')[1][:200]
    # memory: the account's estimate at each measured batch beside the live-tensor peak and the process peak
    from advisor.engine.units import nbytes

    results = html.split('id="results"')[1]
    memory_32 = engine.memory_for(rec.result["candidates"][0], batch_size=32)["total"]
    assert "Tensors, estimated" in results and "Tensors, measured" in results
    assert nbytes(memory_32) in results and nbytes(9_500_000) in results and nbytes(10_000_000) in results
    # on a CPU, the process's estimated growth beside the measured one (issue 27 item 7)
    resident_32 = engine.resident_for(rec.result["candidates"][0], batch_size=32)
    assert "Process growth, estimated" in results and nbytes(resident_32) in results
    page = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert f'href="/calibrations/{job.pk}/"' in page and 'class="badge measured"' in page
    # the memory breakdown at the peak, every part the account names
    for part in ("Saved activations", "The mini-batch", "Workspace (gradients in flight"):
        assert part in page


def test_it_shows_a_gpu_calibration_without_thread_counts(client_for: Client, rec: Any) -> None:
    from advisor import engine
    from advisor.models import Device, MeasuredConfiguration

    gpu = Device.objects.create(
        id="webtest-cuda0", host="webtest", kind="cuda", name="NVIDIA H100 80GB HBM3",
        memory_bytes=80 * 10**9, queue="device.webtest-cuda0",
    )  # fmt: skip
    job = CalibrationJob.objects.create(
        owner=rec.owner, recommendation=rec, device=gpu, batch_sizes=[64, 128], threads=[],
        time_limit_seconds=60, status=CalibrationJob.SUCCEEDED, progress=1.0,
        estimate={
            **engine.measured_estimate(rec.result, 0, seconds_per_batch=0.001, batch_size=128),
            "measured_at": {"batch_size": 128, "threads": None, "device": gpu.id},
        },
    )  # fmt: skip
    for batch, seconds in ((64, 0.0008), (128, 0.001)):
        result = {"seconds_per_batch": seconds, "examples_per_second": batch / seconds, "device": "cuda:0"}
        MeasuredConfiguration.objects.create(
            job=job, batch_size=batch, threads=None, seconds_per_batch=seconds, result=result
        )
    html = client_for.get(f"/calibrations/{job.pk}/").content.decode()
    assert "vs threads" not in html and "Time per batch vs batch size (GPU)" in html
    assert "None" not in html and html.count("<polyline") == 1
    page = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert "None" not in page and "(batch 128 on webtest-cuda0)" in page


def test_it_shows_a_failed_job_with_its_reason(client_for: Client, rec: Any, device: Any) -> None:
    job = finished_job(rec, device, status=CalibrationJob.FAILED)
    html = client_for.get(f"/calibrations/{job.pk}/").content.decode()
    assert "Failed:" in html and "signal 9" in html


def test_it_paginates_history_newest_first(client_for: Client, user: Any, rec: Any) -> None:
    Recommendation.objects.bulk_create(
        Recommendation(owner=user, spec=rec.spec, result=rec.result) for _ in range(25)
    )
    first = client_for.get("/history/")
    ids = [r.pk for r in first.context["page"]]
    assert len(ids) == 20 and ids == sorted(ids, reverse=True)
    second = client_for.get("/history/?page=2")
    assert len(second.context["page"]) == 6 and max(r.pk for r in second.context["page"]) < min(ids)


def test_it_compares_two_candidates_and_two_devices(client_for: Client, rec: Any, device: Any) -> None:
    html = client_for.get(f"/compare/?kind=candidates&a={rec.pk}:0&b={rec.pk}:1").content.decode()
    assert "Parameters" in html and f"#{rec.pk} candidate 2" in html
    a, b = finished_job(rec, device), finished_job(rec, device)
    html = client_for.get(f"/compare/?kind=devices&a={a.pk}&b={b.pk}").content.decode()
    assert "Examples per second" in html and f"Calibration #{b.pk}" in html


def test_it_shows_and_replaces_the_api_token(client_for: Client, user: Any) -> None:
    from rest_framework.authtoken.models import Token

    html = client_for.get("/account/token/").content.decode()
    key = Token.objects.get(user=user).key
    assert key in html and "Authorization: Token" in html
    assert client_for.post("/account/token/regenerate/").status_code == 302
    assert Token.objects.get(user=user).key != key


def test_it_refuses_posts_without_a_csrf_token(user: Any, rec: Any, device: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post("/", {"go": "recommend"}).status_code == 403
    assert client.post(f"/recommendations/{rec.pk}/calibrate/", {"device": device.id}).status_code == 403
    assert client.post("/account/token/regenerate/").status_code == 403
    page = client.get("/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in page and "X-CSRFToken" in page


def test_it_lists_every_rule_with_an_anchor(client_for: Client) -> None:
    from advisor import engine

    html = client_for.get("/rules/").content.decode()
    for rule in engine.rules():
        assert f'id="rule-{rule["id"]}"' in html


@pytest.mark.parametrize("url", ["/history/", "/history/calibrations/", "/"])
def test_it_reads_a_page_of_history_in_a_fixed_number_of_queries(
    client_for: Client, user: Any, rec: Any, device: Any, url: str
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client_for.get(url).status_code == 200
        return len(captured)

    finished_job(rec, device)
    few = queries()
    Recommendation.objects.bulk_create(
        Recommendation(owner=user, spec=rec.spec, result=rec.result) for _ in range(30)
    )
    for _ in range(3):
        finished_job(rec, device)
    assert queries() == few


def test_it_fills_cores_from_a_catalog_processor(client_for: Client) -> None:
    from advisor import engine

    cpu = max(engine.cpu_catalog(), key=lambda c: c["cores"])
    response = _wizard_post(client_for, {"step": "hardware", "use_cpu": cpu["id"], "ram_gb": "256"})
    form = response.context["form"]
    assert response.context["step"] == "hardware"
    assert (form["cpu_cores"].value(), form["cpu_threads"].value()) == (
        str(cpu["cores"]),
        str(cpu["threads"]),
    )
    assert form["ram_gb"].value() == "256"  # the rest of the step stays as the user set it
    assert response.context["preview"]["plan"]["threads"] == cpu["cores"]


@pytest.mark.parametrize(
    ("name", "memory_gb", "gpu"),
    [
        ("Tesla V100-SXM2-32GB", 32, "v100-sxm2-32gb"),
        ("NVIDIA A100-SXM4-80GB", 80, "a100-80gb"),
        ("NVIDIA A100-SXM4-40GB", 40, "a100-40gb"),
        ("NVIDIA GeForce RTX 4090", 24, "rtx-4090"),
        ("NVIDIA RTX A4000", 16, None),
    ],
)
def test_it_prefills_hardware_from_a_workers_gpu(
    client_for: Client, device: Any, name: str, memory_gb: int, gpu: str | None
) -> None:
    from advisor.models import Device

    cuda = Device.objects.create(
        id="webtest-cuda0", host="webtest", kind="cuda", name=name, memory_bytes=memory_gb * 10**9,
        queue="device.webtest-cuda0",
    )  # fmt: skip
    response = _wizard_post(client_for, {"step": "hardware", "use_device": cuda.id})
    form = response.context["form"]
    assert form["gpu"].value() == (gpu or "")
    assert form["cpu_cores"].value() == str(device.cores)  # the host's CPU, from its own worker device
    assert form["gpu_memory_gb"].value() == (str(float(memory_gb)) if gpu else "")
    assert response.context["step"] == "hardware" and response.context["preview"] is not None


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"ram_gb": "-1"}, "ram_gb"),
        ({"cpu_cores": "4", "cpu_threads": "2"}, "cpu_threads"),
        ({"accuracy": "1.5"}, "accuracy"),
        ({"labelled_fraction": "2"}, "labelled_fraction"),
        ({"gpu_memory_gb": "8"}, "gpu_memory_gb"),
        ({"gpus_per_node": "2"}, "gpus_per_node"),
        ({"task": "tabular", "input_shape": "3, 32, 32"}, "input_shape"),
        ({"outputs": ""}, "outputs"),
        ({"examples": "0"}, "examples"),
    ],
)
def test_it_puts_each_engine_error_on_its_field(
    client_for: Client, changes: dict[str, str], field: str
) -> None:
    from advisor import engine
    from advisor.web.forms import SpecForm, step_of

    response = _wizard_post(client_for, {**changes, "step": "task", "go": "recommend"})
    assert response.status_code == 400 and response.context["step"] == step_of(field)
    bound = SpecForm(response.context["form"].data)
    assert bound.is_valid()
    with pytest.raises(engine.SpecError) as raised:
        engine.normalise(bound.to_spec())
    (path,) = [p for p in raised.value.errors if p.rsplit(".", 1)[-1] == field]
    shown = dict((f.name, errors) for f, errors in response.context["visible"])[field]
    assert shown == raised.value.errors[path]


@pytest.mark.parametrize(
    ("task", "sent", "dropped"),
    [
        ("tabular", {"goal", "outputs", "accuracy"}, {"vocab_size", "generation", "two_sample"}),
        ("sequence", {"goal", "outputs", "accuracy", "vocab_size"}, {"generation", "two_sample"}),
        ("generation", {"vocab_size", "generation", "two_sample"}, {"goal", "outputs", "accuracy"}),
    ],
)
def test_the_wizard_sends_only_the_fields_of_its_task(task: str, sent: set[str], dropped: set[str]) -> None:
    """A field of another task (fields.py, `tasks`) stays on the page when the task changes but is not sent:
    a vocabulary typed for a sequence task and left behind would otherwise be refused on a tabular one."""
    from advisor.web.forms import SpecForm

    values = {"goal": "classify", "outputs": "3", "accuracy": "0.9", "vocab_size": "1000"}
    values |= {"generation": "sequence", "two_sample": "0.8"}
    form = SpecForm(
        {"task": task, "examples": "1000", "input_shape": "16", "cpu_cores": "2", "ram_gb": "8", **values}
    )
    assert form.is_valid(), form.errors
    spec = form.to_spec()
    flat = {**spec, **spec["data"], **spec["target"]}
    assert {name for name in sent | dropped if flat.get(name) is not None} == sent


def test_it_draws_the_probe_section_when_its_template_exists(
    client_for: Client, rec: Any, settings: Any, tmp_path: Any
) -> None:
    assert "Accuracy probe for" not in client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "_recommendation.html").write_text(
        "<section><h2>Accuracy probe for #{{ rec.pk }}</h2><p>{{ chosen.title }}</p></section>"
    )
    engine = {**settings.TEMPLATES[0], "DIRS": [tmp_path, *settings.TEMPLATES[0]["DIRS"]]}
    settings.TEMPLATES = [engine]
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert f"Accuracy probe for #{rec.pk}" in html
