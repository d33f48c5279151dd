"""What every settings section shares: errors, secrets, CSV lists and endpoint overrides."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar

import platformdirs
from pydantic import BaseModel, ConfigDict, SecretStr, field_validator
from pydantic_settings import NoDecode

ENV_PREFIX = "GPU_TRACKER_"
CONFIG_ENV = "GPU_TRACKER_CONFIG"


class ConfigError(Exception):
    """Configuration that cannot be used; the message is one line naming the setting."""


def default_database_url() -> str:
    path = Path(platformdirs.user_data_dir("gpu-tracker")) / "tracker.db"
    return f"sqlite:///{path}"


def split_csv(value: Any) -> Any:
    """Accept ``a,b,c`` from the environment as well as a TOML list."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


CsvList = Annotated[list[str], NoDecode]


def read_secret(value: SecretStr | None, file: Path | None, name: str) -> SecretStr | None:
    """The secret itself, or the stripped content of its ``*_FILE`` (one line); never
    both. Raises :class:`ConfigError` naming the setting (and the file, never its text)."""
    if file is None:
        return value
    if value is not None:
        raise ConfigError(f"{name}: set either the value or {name}_file, not both")
    try:
        text = file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"{name}_file: cannot read {file}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{name}_file: {file} is not UTF-8 text") from None
    # Every secret here (a key, a token, a password, a webhook URL) is one line: a second
    # line is a pasted mistake that would otherwise fail deep inside a request.
    lines = len(text.splitlines())
    if lines > 1:
        raise ConfigError(f"{name}_file: {file} holds {lines} lines; the secret is one line")
    return SecretStr(text)


def secret_or_env(
    value: SecretStr | None,
    file: Path | None,
    name: str,
    env_var: str,
    environ: Mapping[str, str] | None = None,
) -> SecretStr | None:
    """A provider secret: the section's own value or its ``*_file``, else the provider's
    conventional variable (the one its own SDK and CLI read); None when neither is set."""
    secret = read_secret(value, file, name)
    if secret is not None and secret.get_secret_value().strip():
        return secret
    fallback = (os.environ if environ is None else environ).get(env_var, "").strip()
    return SecretStr(fallback) if fallback else None


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


Section = Section
"""The old private name, kept for plugins that subclass it."""


def endpoint_origin(value: str | None) -> str | None:
    """``scheme://host[:port]`` that replaces a documented URL's origin (its path is kept)."""
    if value is None or not value.strip():
        return None
    from urllib.parse import urlsplit  # local: only the GPU-cloud sections use it

    value = value.strip().rstrip("/")
    parts = urlsplit(value if "://" in value else f"https://{value}")
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
        raise ValueError(
            f"expected http(s)://host[:port] without a path (the documented path is kept), "
            f"got {value!r}"
        )
    return f"{parts.scheme}://{parts.netloc}"


class KeyedCloudSettings(Section):
    """A GPU cloud whose API needs a key: the section's own setting, its ``*_file``, or
    the provider's conventional variable (``LAMBDA_API_KEY``, ``RUNPOD_API_KEY``)."""

    _fallback_env: ClassVar[str] = ""
    _section: ClassVar[str] = ""

    enabled: bool = True
    api_key: SecretStr | None = None
    api_key_file: Path | None = None
    endpoint_url: str | None = None
    """Replaces scheme, host and port of the documented endpoint; the path is kept."""

    _origin = field_validator("endpoint_url")(endpoint_origin)

    def resolved_api_key(self, environ: Mapping[str, str] | None = None) -> SecretStr | None:
        return secret_or_env(
            self.api_key,
            self.api_key_file,
            f"{self._section}.api_key",
            self._fallback_env,
            environ,
        )

    @classmethod
    def key_setting(cls) -> str:
        """How a user sets the key, for the one line that says it is missing or refused."""
        setting = f"GPU_TRACKER_{cls._section.upper()}__API_KEY"
        return f"{setting} (or {cls._fallback_env})" if cls._fallback_env else setting
