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
    # Liveness, not readiness: a provider or database outage must not restart the
    # container (issue 10 item 4); /readyz and /healthz are for monitoring.
    assert "/livez" in " ".join(tracker["test"])
    image_check = re.search(
        r"^HEALTHCHECK .*?CMD (.*)$", (REPO / "Dockerfile").read_text(), re.M | re.S
    )
    assert image_check is not None and "/livez" in image_check.group(1)
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
    installs = [line for line in dockerfile.splitlines() if "pip install" in line]
    # runtime deps only (no [test] extra), each checked against the lock's hashes,
    # then the project itself without resolving anything again
    assert installs == [
        "    && /opt/venv/bin/pip install --require-hashes --no-deps -r requirements.lock",
        "RUN /opt/venv/bin/pip install --no-deps --no-build-isolation . \\",
    ]
    ignored = (REPO / ".dockerignore").read_text().split()
    assert {"tests", ".venv", ".env", ".git"} <= set(ignored)


DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def test_base_images_are_pinned_by_digest(compose: dict[str, Any]) -> None:
    froms = re.findall(r"^FROM (\S+)", (REPO / "Dockerfile").read_text(), re.MULTILINE)
    assert len(froms) == 2
    for image in froms:
        assert image.startswith("python:3.11-slim@") and DIGEST.search(image), image
    assert len(set(froms)) == 1  # both stages on the same base
    postgres = compose["services"]["postgres"]["image"]
    assert postgres.startswith("postgres:16@") and DIGEST.search(postgres), postgres


def _interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} (enough for this file)."""

    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2) or "", match.group(3) or ""
        if env.get(name):
            return env[name]
        if op == ":?":
            raise AssertionError(f"{name} is required: {arg}")
        return arg if op == ":-" else ""

    return re.sub(r"\$\{([A-Z0-9_]+)(:[-?])?([^}]*)\}", one, value)


def test_the_database_password_is_passed_apart_from_the_url(compose: dict[str, Any]) -> None:
    for name in ("migrate", "tracker"):
        env = env_of(compose["services"][name])
        assert "POSTGRES_PASSWORD" not in env["GPU_TRACKER_DATABASE_URL"]
        assert env["PGPASSWORD"].startswith("${POSTGRES_PASSWORD:?")


@pytest.mark.postgres
def test_a_password_with_url_characters_reaches_postgres_intact(
    compose: dict[str, Any], pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tracker's environment as compose builds it, with a password holding every
    character a URL gives a meaning to, connects and hands libpq that exact password
    (the machine's Postgres trusts local connections, so the password is not checked;
    what is checked is that it arrives whole and the URL around it still parses)."""
    from sqlalchemy.engine import make_url

    from tracker.store.engine import make_engine

    target = make_url(pg_url)
    password = "p@ss:w/rd#?%40&=[]1"
    dotenv = {
        "POSTGRES_USER": str(target.username),
        "POSTGRES_PASSWORD": password,
        "POSTGRES_DB": str(target.database),
    }
    env = {k: _interpolate(v, dotenv) for k, v in env_of(compose["services"]["tracker"]).items()}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # Only the host differs: compose's service name is this machine's loopback.
    url = env["GPU_TRACKER_DATABASE_URL"].replace("@postgres:5432/", "@127.0.0.1:5432/")
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            info = conn.connection.driver_connection.info  # type: ignore[union-attr]
            assert (info.host, info.port, info.user, info.dbname) == (
                "127.0.0.1",
                5432,
                target.username,
                target.database,
            )
            assert info.password == password
    finally:
        engine.dispose()


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

    # compose's own interpolation: the password arrives whole, the URL never holds it
    (tmp_path / ".env").write_text("POSTGRES_PASSWORD=p@ss:w/rd?1\n")
    rendered = subprocess.run(
        [*command, "-f", "docker-compose.yml", "config"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    env = env_of(yaml.safe_load(rendered.stdout)["services"]["tracker"])
    assert env["PGPASSWORD"] == "p@ss:w/rd?1"
    assert env["GPU_TRACKER_DATABASE_URL"] == "postgresql://tracker@postgres:5432/gpu_tracker"

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


LOCKS = {"requirements.lock": (), "requirements-test.lock": ("test",)}
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+) \\$")


def _locked(path: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, sha256 hashes) of a pip-compile --generate-hashes file."""
    from packaging.utils import canonicalize_name

    pins: dict[str, tuple[str, list[str]]] = {}
    current = ""
    for line in path.read_text().splitlines():
        if match := PIN.match(line):
            current = canonicalize_name(match.group(1))
            pins[current] = (match.group(2), [])
        elif line.strip().startswith("--hash=sha256:"):
            pins[current][1].append(line.strip().removeprefix("--hash=sha256:").rstrip(" \\"))
        elif line.strip() and not line.startswith("#") and not line.strip().startswith("#"):
            raise AssertionError(f"{path.name}: unexpected line {line!r}")
    return pins


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_lock_files_pin_every_requirement_with_hashes(lock: str) -> None:
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    text = (REPO / lock).read_text()
    assert "autogenerated by pip-compile with Python 3.11" in text
    pins = _locked(REPO / lock)
    assert pins
    for name, (_, hashes) in pins.items():
        assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    wanted = list(project["project"]["dependencies"]) + list(project["build-system"]["requires"])
    for extra in LOCKS[lock]:
        wanted += project["project"]["optional-dependencies"][extra]
    for spec in wanted:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{lock} misses {spec}: regenerate it (README, Development)"
        assert requirement.specifier.contains(pins[name][0], prereleases=True), (spec, pins[name])
    if not LOCKS[lock]:
        assert "pytest" not in pins  # the image's lock holds runtime packages only


def test_ci_installs_the_test_lock_with_hashes_and_runs_in_ci_mode() -> None:
    run = (REPO / ".ci/run").read_text()
    assert re.search(r"^export CI=true$", run, re.MULTILINE)
    installs = [line.strip() for line in run.splitlines() if " -m pip install" in line]
    assert installs == [
        ".venv/bin/python -m pip install -q --require-hashes --no-deps -r requirements-test.lock",
        ".venv/bin/python -m pip install -q --no-deps --no-build-isolation -e .",
    ]
