"""A token that means something, and only the names the server is known by (issue 44.5).

The reproductions first: ``GPU_TRACKER_WEB__TOKEN=""`` (or ``" "``, or a token file
holding a newline) used to start "(no token: local use)" and serve everything; ``web
--http 0.0.0.0:PORT`` without a token was one INFO line; a 1-character token was
accepted; ``Host: evil.example`` was answered and redirected to
(``location: http://evil.example/api/v1/``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from tests.conftest import SCRIPT, cli_runner
from tests.web.conftest import TOKEN, Site, serve
from tracker.settings import ConfigError, Settings, WebSettings

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize("blank", ["", " ", "\n", " \t\n"])
def test_a_blank_token_is_an_error_not_no_token(blank: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"web\.token: the token is empty"):
        WebSettings(token=SecretStr(blank)).resolved_token()
    token_file = tmp_path / "token"
    token_file.write_text(blank)
    with pytest.raises(ConfigError, match=r"web\.token_file: the token is empty"):
        WebSettings(token_file=token_file).resolved_token()


def test_a_token_needs_sixteen_characters() -> None:
    with pytest.raises(ConfigError, match="the token has 1 characters; at least 16"):
        WebSettings(token=SecretStr("x")).resolved_token()
    with pytest.raises(ConfigError, match="has 15 characters"):
        WebSettings(token=SecretStr("a" * 15)).resolved_token()
    sixteen = WebSettings(token=SecretStr(" " + "a" * 16 + "\n")).resolved_token()
    assert sixteen is not None and sixteen.get_secret_value() == "a" * 16  # stripped


@pytest.mark.parametrize("value", ["", " "])
def test_web_refuses_to_start_with_a_blank_token_from_the_environment(
    value: str, site: Site, tmp_path: Path
) -> None:
    run = cli_runner(site.database_url, tmp_path)
    result = run("web", "--http", "127.0.0.1:0", extra_env={"GPU_TRACKER_WEB__TOKEN": value})
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "gpu-tracker: error: web.token: the token is empty; set one of at least 16 "
        "characters (openssl rand -hex 16), or unset it to serve without one"
    ]


def test_web_refuses_a_token_file_holding_a_newline(site: Site, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("\n")
    run = cli_runner(site.database_url, tmp_path)
    result = run(
        "web", "--http", "127.0.0.1:0", extra_env={"GPU_TRACKER_WEB__TOKEN_FILE": str(token_file)}
    )
    assert result.returncode == 2
    assert "web.token_file: the token is empty" in result.stderr


def test_serve_refuses_a_short_token(site: Site, tmp_path: Path) -> None:
    run = cli_runner(site.database_url, tmp_path)
    result = run("serve", "--http", "127.0.0.1:0", extra_env={"GPU_TRACKER_WEB__TOKEN": "x"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "gpu-tracker: error: web.token: the token has 1 characters; at least 16 are "
        "required (openssl rand -hex 16)"
    ]


@pytest.mark.parametrize("command", ["web", "serve"])
def test_a_public_address_without_a_token_refuses_to_start(
    command: str, site: Site, tmp_path: Path
) -> None:
    run = cli_runner(site.database_url, tmp_path)
    result = run(command, "--http", "0.0.0.0:0")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "gpu-tracker: error: refusing to serve 0.0.0.0 without a token: set "
        "GPU_TRACKER_WEB__TOKEN (or web.token_file), bind 127.0.0.1, or set "
        "web.allow_public = true"
    ]


def test_loopback_and_tokens_need_no_allowance() -> None:
    web = WebSettings()
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert web.public_warning(host) is None
    assert WebSettings(token=SecretStr(TOKEN)).public_warning("0.0.0.0") is None
    with pytest.raises(ConfigError, match=r"refusing to serve 192\.168\.1\.5"):
        web.public_warning("192.168.1.5")
    with pytest.raises(ConfigError, match="refusing to serve every interface"):
        web.public_warning("")


def _wait_up(url: str) -> None:
    for _ in range(300):
        try:
            if httpx.get(f"{url}/livez", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


def test_allow_public_starts_with_one_warning(site: Site, tmp_path: Path) -> None:
    """A real process: the WARNING must reach the log once, and the server answers."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_TRACKER_")}
    env.update(
        GPU_TRACKER_DATABASE_URL=site.database_url,
        GPU_TRACKER_WEB__ALLOW_PUBLIC="true",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    proc = subprocess.Popen(
        [SCRIPT, "web", "--http", f"0.0.0.0:{port}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_up(f"http://127.0.0.1:{port}")
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/offers", timeout=30).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, output
    warnings = [line for line in output.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, output
    assert "serving 0.0.0.0 without a token (web.allow_public = true)" in warnings[0]
    assert "Host names answered: 127.0.0.1, ::1, localhost (web.allowed_hosts)" in warnings[0]


def _raw_get(url: str, path: str, host: str, **headers: str) -> httpx.Response:
    """A request whose ``Host`` header is ``host`` (what a rebinding page sends)."""
    return httpx.get(f"{url}{path}", headers={"Host": host, **headers}, timeout=30)


def test_another_host_is_a_400_without_a_token(site: Site) -> None:
    port = site.url.rsplit(":", 1)[1]
    # before: 200 and a redirect to http://evil.example/api/v1/
    refused = _raw_get(site.url, "/api/v1", "evil.example")
    assert refused.status_code == 400
    assert refused.json() == {
        "error": "host: 'evil.example' is not a name this server answers (web.allowed_hosts)"
    }
    assert "location" not in refused.headers
    assert _raw_get(site.url, "/", f"evil.example:{port}").status_code == 400
    assert _raw_get(site.url, "/healthz", "evil.example").status_code == 400
    for name in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert _raw_get(site.url, "/api/v1/", name).status_code == 200, name
    # an orchestrator probes liveness by the pod's address
    assert _raw_get(site.url, "/livez", "10.0.0.7:8080").status_code == 200


def test_redirects_keep_the_request_s_own_host(locked_site: Site) -> None:
    """With a token any Host is answered (unless listed): the redirect is a path, so
    the browser stays where it asked; no absolute URL is built from the header."""
    moved = _raw_get(locked_site.url, "/api/v1", "evil.example", **AUTH)
    assert moved.status_code in (307, 308)
    assert moved.headers["location"] == "/api/v1/"  # before: http://evil.example/api/v1/
    port = locked_site.url.rsplit(":", 1)[1]
    own = _raw_get(locked_site.url, "/api/v1", f"127.0.0.1:{port}", **AUTH)
    assert own.headers["location"] == "/api/v1/"


@pytest.fixture
def listed_site(site: Site) -> Iterator[Site]:
    settings = Settings(
        database_url=site.database_url,
        web=WebSettings(
            token=SecretStr(TOKEN), allowed_hosts=["tracker.example.com", "*.corp.example"]
        ),
    )
    server = serve(settings, site.engine)
    yield Site(server.url, site.engine, settings, site.database_url)
    server.stop()


def test_allowed_hosts_are_exactly_the_names_listed(listed_site: Site) -> None:
    for name in ("tracker.example.com", "tracker.example.com:443", "gpu.corp.example"):
        assert _raw_get(listed_site.url, "/api/v1/", name, **AUTH).status_code == 200, name
    for name in ("evil.example", "127.0.0.1", "corp.example.evil", "xtracker.example.com"):
        assert _raw_get(listed_site.url, "/api/v1/", name, **AUTH).status_code == 400, name


def test_allowed_hosts_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_TRACKER_WEB__ALLOWED_HOSTS", "a.example, b.example")
    assert Settings().web.hosts(None) == frozenset({"a.example", "b.example"})
    assert WebSettings().hosts("192.168.1.5") == frozenset(
        {"localhost", "127.0.0.1", "::1", "192.168.1.5"}
    )
    assert WebSettings().hosts("0.0.0.0") == frozenset({"localhost", "127.0.0.1", "::1"})
    assert WebSettings(token=SecretStr(TOKEN)).hosts("0.0.0.0") is None  # any
    assert WebSettings(allowed_hosts=["*"]).hosts(None) is None
