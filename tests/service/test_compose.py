"""The deployment files: docker-compose.yml, .env.example, Dockerfile."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN|API_KEY|ACCESS_KEY", re.IGNORECASE)
INTERPOLATION = re.compile(r"^\$\{[A-Z0-9_]+(:?[-?][^}]*)?\}$")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def env_of(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def test_services_and_their_order(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "migrate", "tracker"}
    assert services["postgres"]["image"].split(":")[0] == "postgres"
    assert services["migrate"]["command"] == ["db", "upgrade"]
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["migrate"]["restart"] == "no"
    assert services["tracker"]["command"][0] == "serve"
    assert services["tracker"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "migrate": {"condition": "service_completed_successfully"},
    }
    assert services["tracker"]["restart"] in ("unless-stopped", "always")
    assert services["postgres"]["restart"] in ("unless-stopped", "always")


def test_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    pg = services["postgres"]["healthcheck"]
    assert "pg_isready" in " ".join(pg["test"])
    tracker = services["tracker"]["healthcheck"]
    assert "/healthz" in " ".join(tracker["test"])
    command = services["tracker"]["command"]
    # The probe reaches the server inside the container: it must not listen on loopback only.
    assert command[command.index("--http") + 1] == "0.0.0.0:8080"
    for check in (pg, tracker):
        assert {"interval", "timeout", "retries"} <= set(check)


def test_database_lives_on_a_named_volume(compose: dict[str, Any]) -> None:
    mounts = compose["services"]["postgres"]["volumes"]
    assert "pgdata:/var/lib/postgresql/data" in mounts
    assert "pgdata" in compose["volumes"]


def test_no_secret_is_written_inline(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        for key, value in env_of(service).items():
            if SECRET_NAME.search(key):
                assert INTERPOLATION.match(value), f"{name}.{key} must come from .env, got {value}"
            # a URL with credentials must take its password from .env too
            literal = re.sub(r"\$\{[^}]*\}", "", value)
            assert not re.search(r"://[^/@]*:[^/@]+@", literal), f"{name}.{key}: inline password"
    for name in ("migrate", "tracker"):
        assert compose["services"][name]["env_file"] == ".env"


def test_env_example_covers_every_required_variable(compose: dict[str, Any]) -> None:
    text = (REPO / "docker-compose.yml").read_text()
    required = set(re.findall(r"\$\{([A-Z0-9_]+):\?", text))
    example = (REPO / ".env.example").read_text()
    defined = set(re.findall(r"^([A-Z0-9_]+)=", example, re.MULTILINE))
    assert required and required <= defined
    assert ".env" in (REPO / ".gitignore").read_text().split()


def test_image_runs_as_a_non_root_user_with_runtime_deps_only() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    stages = re.split(r"^FROM ", dockerfile, flags=re.MULTILINE)[1:]
    assert len(stages) == 2  # a build stage and a clean runtime stage
    runtime = stages[-1]
    assert runtime.startswith("python:3.11-slim")
    assert re.search(r"^USER tracker$", runtime, re.MULTILINE)
    [install] = [line for line in dockerfile.splitlines() if "pip install" in line]
    assert install.rstrip().endswith("pip install .")  # runtime deps only, no [test] extra
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {"tests", ".venv", ".env", ".git"} <= set(ignored)


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run(
            [docker, "compose", "version"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("neither the docker compose plugin nor docker-compose is installed")
    for name in ("docker-compose.yml", ".env.example"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / ".env.example").rename(tmp_path / ".env")
    (tmp_path / "config").mkdir()
    result = subprocess.run(
        [*command, "-f", "docker-compose.yml", "config", "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr

    (tmp_path / ".env").write_text("POSTGRES_USER=tracker\n")  # the password is missing
    missing = subprocess.run(
        [*command, "-f", "docker-compose.yml", "config", "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert missing.returncode != 0
    assert "POSTGRES_PASSWORD" in missing.stderr
