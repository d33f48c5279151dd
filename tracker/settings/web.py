"""Settings section `[web]`: the dashboard and JSON API (tracker/web/)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from pydantic import Field, SecretStr, field_validator

from tracker.settings.base import ConfigError, CsvList, Section, read_secret, split_csv

__all__ = [
    "DEFAULT_WEB_ADDRESS",
    "LOCAL_NAMES",
    "MIN_TOKEN_LENGTH",
    "WebSettings",
    "is_loopback",
]

DEFAULT_WEB_ADDRESS = "127.0.0.1:8080"
MIN_TOKEN_LENGTH = 16
"""The shortest token accepted: a guessable token is no lock (16 random characters of
``openssl rand -hex 16``'s 32 are already 64 bits)."""
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
"""The names a browser on this machine reaches a loopback server by."""
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
"""Bind addresses meaning "every interface": no name a client sends."""


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a name that resolves elsewhere, or an interface's address


class WebSettings(Section):
    """The dashboard and JSON API served by ``serve`` and ``web``.

    ``token`` is a secret (``GPU_TRACKER_WEB__TOKEN`` or ``token_file``): when set,
    every route except the health probes needs ``Authorization: Bearer <token>``
    (or HTTP basic auth with the token as password). A blank token is an error, not
    "no token": whoever set one meant to lock the dashboard.
    """

    enabled: bool = True
    """False: ``serve`` answers only /livez, /readyz, /healthz and /metrics."""
    http: str = DEFAULT_WEB_ADDRESS
    """Where ``gpu-tracker web`` listens (``serve`` uses ``scheduler.http``)."""
    token: SecretStr | None = None
    token_file: Path | None = None
    allow_public: bool = False
    """True: serve a non-loopback address without a token (said in one WARNING)."""
    allowed_hosts: CsvList | None = None
    """``Host`` names answered (``*`` any, ``*.example.com`` a domain); unset: any when a
    token is set, else the bound host and the localhost names (DNS rebinding)."""
    page_size: int = Field(50, ge=1, le=1000)
    """Rows per page of the Offers page."""
    max_limit: int = Field(10000, ge=1)
    """The most rows one /api/v1 request may ask for (``limit``), and what a list route
    answers without a ``limit``."""
    max_concurrent: int = Field(8, ge=1)
    """Requests read the database at once; keep it under the engine's pool (15 by
    default) so the scheduler and the probes always find a connection."""
    max_queued: int = Field(100, ge=0)
    """Requests waiting for a turn; one more is a 429 with ``Retry-After``."""
    queue_seconds: float = Field(10.0, gt=0)
    """How long a request waits for its turn before a 429."""

    _split = field_validator("allowed_hosts", mode="before")(split_csv)

    def resolved_token(self) -> SecretStr | None:
        """The token (stripped), None when none is set; ConfigError for a blank or
        short one, so a typo never leaves the dashboard open."""
        token = read_secret(self.token, self.token_file, "web.token")
        if token is None:
            return None
        value = token.get_secret_value().strip()
        where = "web.token_file" if self.token_file is not None else "web.token"
        if not value:
            raise ConfigError(
                f"{where}: the token is empty; set one of at least {MIN_TOKEN_LENGTH} "
                "characters (openssl rand -hex 16), or unset it to serve without one"
            )
        if len(value) < MIN_TOKEN_LENGTH:
            raise ConfigError(
                f"{where}: the token has {len(value)} characters; at least "
                f"{MIN_TOKEN_LENGTH} are required (openssl rand -hex 16)"
            )
        return SecretStr(value)

    def public_warning(self, host: str) -> str | None:
        """Whether serving on ``host`` may start: None for a loopback address or one
        behind a token; the WARNING line when ``allow_public`` opens it; ConfigError
        otherwise (every price, plan and alert readable by anyone who can reach it)."""
        if is_loopback(host) or self.resolved_token() is not None:
            return None
        shown = host or "every interface"
        if not self.allow_public:
            raise ConfigError(
                f"refusing to serve {shown} without a token: set GPU_TRACKER_WEB__TOKEN "
                "(or web.token_file), bind 127.0.0.1, or set web.allow_public = true"
            )
        return (
            f"serving {shown} without a token (web.allow_public = true): anyone who can "
            f"reach it reads the dashboard; Host names answered: "
            f"{', '.join(sorted(self.hosts(host) or ['any']))} (web.allowed_hosts)"
        )

    def hosts(self, bound: str | None) -> frozenset[str] | None:
        """The ``Host`` names answered, lower case (None: any): ``allowed_hosts`` when
        set; any when a token guards the routes; else the localhost names and the
        bound host, so a page elsewhere cannot read a token-less dashboard through a
        name it rebinds to 127.0.0.1."""
        if self.allowed_hosts is not None:
            listed = frozenset(h.strip().lower().strip("[]") for h in self.allowed_hosts)
            return None if "*" in listed else listed
        if self.resolved_token() is not None:
            return None
        names: set[str] = set(LOCAL_NAMES)
        if bound is not None and bound.strip("[]") not in WILDCARD_HOSTS:
            names.add(bound.strip("[]").lower())
        return frozenset(names)
