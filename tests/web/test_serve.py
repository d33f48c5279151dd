"""``serve`` and ``web`` answer the dashboard, the API and the probes on one port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

from tests.conftest import SCRIPT
from tests.web.conftest import TOKEN, Site
from tracker.hooks import Hooks
from tracker.service import Service
from tracker.serving import service_app
from tracker.settings import Settings, WebSettings


def test_serve_answers_dashboard_api_and_probes_on_one_port(site: Site) -> None:
    settings = Settings(database_url=site.database_url)
    service = Service(
        settings, collectors={}, hooks=Hooks(), http="127.0.0.1:0", http_app=service_app
    )
    service.start()
    try:
        base = service.health_url
        assert base is not None
        assert httpx.get(f"{base}/livez", timeout=30).json()["status"] == "ok"
        health = httpx.get(f"{base}/healthz", timeout=30)
        assert health.status_code == 200 and health.json()["database"]["reachable"] is True
        assert "gpu_tracker_database_up 1.0" in httpx.get(f"{base}/metrics", timeout=30).text
        page = httpx.get(f"{base}/", timeout=30)
        assert page.status_code == 200 and "H100-SXM" in page.text
        assert len(httpx.get(f"{base}/api/v1/offers", timeout=30).json()) == 8
    finally:
        service.stop(timeout=5)


def test_web_disabled_leaves_only_the_probes(site: Site) -> None:
    settings = Settings(database_url=site.database_url, web=WebSettings(enabled=False))
    service = Service(
        settings, collectors={}, hooks=Hooks(), http="127.0.0.1:0", http_app=service_app
    )
    service.start()
    try:
        assert httpx.get(f"{service.health_url}/livez", timeout=30).status_code == 200
        assert httpx.get(f"{service.health_url}/api/v1/offers", timeout=30).status_code == 404
    finally:
        service.stop(timeout=5)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_web_command_serves_with_the_token_from_a_file(site: Site, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env.update(
        GPU_TRACKER_DATABASE_URL=site.database_url,
        GPU_TRACKER_WEB__TOKEN_FILE=str(token_file),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    proc = subprocess.Popen(
        [SCRIPT, "web", "--http", f"127.0.0.1:{port}", "--log-level", "DEBUG"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if httpx.get(f"{url}/livez", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        assert httpx.get(f"{url}/api/v1/offers", timeout=30).status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.get(f"{url}/api/v1/offers", headers=auth, timeout=30).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, output
    assert "dashboard on http://127.0.0.1" in output and "token required" in output
    assert "GET /api/v1/offers 200" in output  # requests are logged at DEBUG...
    assert TOKEN not in output  # ...and the token never is


def test_web_command_rejects_a_bad_address(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env["GPU_TRACKER_DATABASE_URL"] = f"sqlite:///{tmp_path / 'x.db'}"
    result = subprocess.run(
        [SCRIPT, "web", "--http", "localhost"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "gpu-tracker: error: --http: expected host:port for the HTTP server, got 'localhost'"
    ]
