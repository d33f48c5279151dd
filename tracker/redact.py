"""Secrets masked out of any text the tracker shows or keeps: log lines, run errors.

A secret reaches text through paths no caller thought of (a provider echoing the
API key in its error body, a URL with a password in an exception), so masking is
applied to the finished text, by value (every secret the settings and the
environment hold) and by where a credential stands (headers no setting describes).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, SecretStr

from tracker.settings import Settings

__all__ = [
    "MASK",
    "SECRET_ENV",
    "environment_secrets",
    "masked_first",
    "redact",
    "secret_forms",
    "secret_values",
    "secret_values_of",
    "secrets_of",
]

MASK = "***"
SECRET_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",  # the legacy name botocore still reads
    "HUAWEICLOUD_SDK_AK",
    "HUAWEICLOUD_SDK_SK",
    "PGPASSWORD",  # libpq's; docker-compose.yml passes the database password this way
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET",  # read by collectors/alibaba.py, Alibaba's own name
    "TENCENTCLOUD_SECRET_ID",  # Tencent's SDK and tccli; the collector reads them too
    "TENCENTCLOUD_SECRET_KEY",
)
"""Credentials libraries read from the environment themselves, outside :class:`Settings`."""


def _secrets_in(value: Any, found: set[str]) -> None:
    """Every ``SecretStr`` under ``value``, and the content of each ``<name>_file``
    that stands beside a ``<name>`` field, so a new secret setting is covered by
    declaring it, with nothing to register."""
    if isinstance(value, SecretStr):
        found.add(value.get_secret_value())
    elif isinstance(value, BaseModel):
        fields = type(value).model_fields
        for name in fields:
            item = getattr(value, name)
            if name.endswith("_file") and name.removesuffix("_file") in fields:
                # An unreadable file is reported where the secret is used.
                if isinstance(item, Path):
                    with contextlib.suppress(OSError):
                        found.add(item.read_text(encoding="utf-8").strip())
            else:
                _secrets_in(item, found)
    elif isinstance(value, Mapping):
        for item in value.values():
            _secrets_in(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _secrets_in(item, found)


def secret_values(settings: Settings) -> set[str]:
    """Every secret the settings hold (the one list the log masking reads): each
    ``SecretStr``, each ``*_file`` secret's content, and the database password as
    given and as it looks URL-encoded, since a URL can reach a log either way."""
    from urllib.parse import quote

    from tracker.store import url_password

    found: set[str] = set()
    _secrets_in(settings, found)
    password = url_password(settings.database_url)
    if password:
        found |= {password, quote(password, safe="")}
    found.discard("")
    return found


def secret_values_of(section: BaseModel) -> set[str]:
    """Every secret one settings section holds (its ``SecretStr`` fields and
    ``*_file`` contents), for code handed a section rather than the whole settings."""
    found: set[str] = set()
    _secrets_in(section, found)
    found.discard("")
    return found


def environment_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """Credentials libraries read from the environment without going through
    :class:`Settings` (boto3's, libpq's), known before any configuration is loaded."""
    env = os.environ if environ is None else environ
    return {env[name] for name in SECRET_ENV if env.get(name)}


# Credentials that can come from somewhere no setting describes (an AWS profile,
# instance metadata, a token refresh), so they are masked by where they stand.
_CREDENTIAL_FIELD = re.compile(
    r"(?i)((?:x-amz-security-token|x-goog-api-key|authorization['\"]?[ \t]*[:=][ \t]*"
    r"(?:b?['\"])?bearer)['\"]?[ \t]*[:= \t][ \t]*(?:b?['\"])?)([A-Za-z0-9+/=%_.~-]{4,})"
)


def _secret_segment(segment: str) -> bool:
    """A path segment that is a credential rather than a route name (``services``,
    ``api``, ``v1``): Slack's ``T0…``/``B0…`` ids and token, Discord's id and token, a
    hook's random path: letters and digits together, or 20 characters and more."""
    mixed = any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment)
    return (len(segment) >= 4 and mixed) or len(segment) >= 20


def secret_forms(secret: str) -> set[str]:
    """``secret`` and, when it is a URL, the parts of it that are secret on their own.

    A receiver or proxy that echoes the request path (``404 no route
    /services/T0…/B0…/<token>``) or a query puts part of a webhook URL in an error
    text without the whole URL: the password, the path from its first secret-looking
    segment on (with and without the leading ``/``), each such segment, and each
    query value are masked too. ``services`` and ``api/webhooks`` stay readable."""
    found = {secret}
    if "://" not in secret:
        return found
    try:
        parts = urlsplit(secret.strip())
        password = parts.password
        user = parts.username
    except ValueError:
        return found
    found |= {v for v in (password, None if password else user) if v}
    segments = [s for s in parts.path.split("/") if s]
    first = next((i for i, s in enumerate(segments) if _secret_segment(s)), None)
    if first is not None:
        tail = "/".join(segments[first:])
        found |= {tail, "/" + tail, *segments[first:]}
    found |= {value for _, value in parse_qsl(parts.query) if value}
    return found


def secrets_of(settings: Settings | None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The values to mask, longest first so an overlap masks fully: every secret of
    ``settings`` (see :func:`secret_values`) and of the environment, each with the
    parts of it that are secret alone (:func:`secret_forms`)."""
    found = environment_secrets(environ)
    if settings is not None:
        found |= secret_values(settings)
    return masked_first(found)


def masked_first(secrets: Iterable[str]) -> list[str]:
    """``secrets`` with their :func:`secret_forms`, longest first, none under 4
    characters (a one- or two-character "secret" would mask every occurrence)."""
    forms = {form for secret in secrets for form in secret_forms(secret)}
    return sorted((s for s in forms if len(s) >= 4), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (longest first, see :func:`secrets_of`) and
    every credential-looking header value replaced by :data:`MASK`."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return _CREDENTIAL_FIELD.sub(rf"\1{MASK}", text)
