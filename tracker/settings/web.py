"""Settings section `[web]`: the dashboard and JSON API (tracker/web/)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr

from tracker.settings.base import Section, read_secret

DEFAULT_WEB_ADDRESS = "127.0.0.1:8080"


class WebSettings(Section):
    """The dashboard and JSON API served by ``serve`` and ``web``.

    ``token`` is a secret (``GPU_TRACKER_WEB__TOKEN`` or ``token_file``): when set,
    every route except the health probes needs ``Authorization: Bearer <token>``
    (or HTTP basic auth with the token as password).
    """

    enabled: bool = True
    """False: ``serve`` answers only /livez, /readyz, /healthz and /metrics."""
    http: str = DEFAULT_WEB_ADDRESS
    """Where ``gpu-tracker web`` listens (``serve`` uses ``scheduler.http``)."""
    token: SecretStr | None = None
    token_file: Path | None = None
    page_size: int = Field(50, ge=1, le=1000)
    """Rows per page of the Offers page."""
    max_limit: int = Field(10000, ge=1)
    """The most rows one /api/v1 request may ask for (``limit``)."""

    def resolved_token(self) -> SecretStr | None:
        token = read_secret(self.token, self.token_file, "web.token")
        if token is None or not token.get_secret_value().strip():
            return None
        return SecretStr(token.get_secret_value().strip())
