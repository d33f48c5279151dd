"""Settings section `[remote]`: another gpu-tracker (a team's ``serve``) as a source."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import SecretStr, field_validator

from tracker.settings.base import Section, read_secret

__all__ = ["RemoteSettings"]


class RemoteSettings(Section):
    """``url`` of a gpu-tracker web server (``http://team-host:8080``); unset, the
    ``remote`` collector is not configured. ``token`` (``GPU_TRACKER_REMOTE__TOKEN`` or
    ``token_file``) is that server's ``web.token``. ``state_dir`` keeps the server's last
    ETag per URL, so a sync with nothing changed transfers nothing."""

    enabled: bool = True
    url: str | None = None
    token: SecretStr | None = None
    token_file: Path | None = None
    state_dir: Path | None = None
    """Default: the user's state folder (``~/.local/state/gpu-tracker`` on Linux)."""

    @field_validator("url")
    @classmethod
    def _origin(cls, value: str | None) -> str | None:
        """``http(s)://host[:port][/prefix]`` without a trailing slash (the sync routes
        are appended); blank means not configured."""
        if value is None or not value.strip():
            return None
        url = value.strip().rstrip("/")
        scheme, sep, rest = url.partition("://")
        if scheme.lower() not in ("http", "https") or not sep or not rest or "?" in url:
            raise ValueError(f"expected http://host:port or https://host, got {value!r}")
        return url

    def resolved_token(self) -> SecretStr | None:
        token = read_secret(self.token, self.token_file, "remote.token")
        if token is None or not token.get_secret_value().strip():
            return None
        return SecretStr(token.get_secret_value().strip())

    def resolved_state_dir(self) -> Path:
        return self.state_dir or Path(platformdirs.user_state_dir("gpu-tracker"))
