"""No Docker engine runs here, so the compose file is checked by parsing it: the services of the team set-up,
their images, environment and health checks, and that every dependency points at a service that exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DOCKER = Path(__file__).resolve().parents[2] / "docker"


def _compose() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def test_it_has_the_team_services_with_healthchecks() -> None:
    services = _compose()["services"]
    assert {"postgres", "redis", "web", "worker-cpu", "migrate"} <= set(services)
    for name in ("postgres", "redis", "web", "worker-cpu"):
        assert services[name]["healthcheck"]["test"], name
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")
    assert "gunicorn" in services["web"]["command"]
    assert services["worker-cpu"]["command"][:4] == ["python", "manage.py", "worker", "--device"]


def test_it_points_the_app_at_postgres_and_redis() -> None:
    services = _compose()["services"]
    for name in ("migrate", "web", "worker-cpu"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:" in env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:")


def test_it_depends_only_on_defined_services() -> None:
    services = _compose()["services"]
    for name, service in services.items():
        for dependency in service.get("depends_on", {}):
            assert dependency in services, f"{name} depends on missing {dependency}"


def test_it_builds_from_files_that_exist() -> None:
    build = _compose()["services"]["migrate"]["build"]
    assert (DOCKER / build["context"] / build["dockerfile"]).resolve().is_file()
    dockerfile = (DOCKER / "Dockerfile").read_text()
    assert "download.pytorch.org/whl/cpu" in dockerfile and "torch==2.13.0" in dockerfile
    assert "torch==" in (DOCKER / "Dockerfile.cuda").read_text()


def test_it_shares_uploaded_samples_between_web_and_workers() -> None:
    compose = _compose()
    services = compose["services"]
    assert "samples" in compose["volumes"]
    for name in ("web", "worker-cpu"):
        assert "samples:/var/lib/advisor/samples" in services[name]["volumes"]


def test_it_offers_flower_as_an_optional_profile_on_the_same_broker() -> None:
    services = _compose()["services"]
    flower = services["flower"]
    assert flower["profiles"] == ["flower"]  # not started by a plain `up`
    assert flower["image"].startswith("mher/flower:")
    broker = services["web"]["environment"]["CELERY_BROKER_URL"]
    assert f"--broker={broker}" in flower["command"] and "flower" in flower["command"]
    assert all(port.startswith("127.0.0.1:") for port in flower["ports"])  # not exposed beyond the host
    assert flower["healthcheck"]["test"]
    readme = (DOCKER / "README.md").read_text()
    assert "--profile flower" in readme and "/api/v1/metrics/" in readme


def _gpu_box() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "compose.gpu-box.yaml").read_text())


def _gpu_workers() -> dict[str, Any]:
    return {name: s for name, s in _gpu_box()["services"].items() if name.startswith("worker-cuda")}


def test_it_gives_each_gpu_worker_every_gpu_of_its_box() -> None:
    workers = _gpu_workers()
    assert len(workers) >= 2
    for name, service in workers.items():
        (reservation,) = service["deploy"]["resources"]["reservations"]["devices"]
        assert reservation["driver"] == "nvidia" and "gpu" in reservation["capabilities"], name
        assert reservation.get("count") == "all" or len(reservation.get("device_ids", [])) > 1, name
        index = name.removeprefix("worker-cuda")
        assert service["command"][-4:-2] == ["--device", f"cuda:{index}"], name
    # one host name for the box: its GPU rows are counted together
    assert len({tuple(s["command"][-2:]) for s in workers.values()}) == 1


def test_it_gives_nccl_shared_memory_and_its_settings() -> None:
    services = _gpu_box()["services"]
    for name in [*_gpu_workers(), "scaling"]:
        service = services[name]
        assert service.get("ipc") == "host" or service.get("shm_size"), name
        env = service["environment"]
        assert {"NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "NCCL_P2P_DISABLE", "GLOO_SOCKET_IFNAME"} <= set(env), (
            name
        )
        assert env["NCCL_DEBUG"].startswith("${NCCL_DEBUG:-")  # overridable, with a default
        assert env["DATABASE_URL"].startswith("postgres://") and env["CELERY_BROKER_URL"].startswith(
            "redis://"
        )
    assert services["scaling"]["command"][-6:-4] == ["--device", "cuda"]
    assert "count: all" in (DOCKER / "README.md").read_text()
