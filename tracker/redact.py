"""Secrets masked out of any text the tracker shows or keeps: log lines, run errors.

A secret reaches text through paths no caller thought of (a provider echoing the
API key in its error body, a URL with a password in an exception), so masking is
applied to the finished text, by value (every secret the settings and the
environment hold) and by where a credential stands (headers no setting describes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from tracker.settings import Settings, environment_secrets, secret_values

__all__ = ["MASK", "redact", "secrets_of"]

MASK = "***"

# Credentials that can come from somewhere no setting describes (an AWS profile,
# instance metadata, a token refresh), so they are masked by where they stand.
_CREDENTIAL_FIELD = re.compile(
    r"(?i)((?:x-amz-security-token|x-goog-api-key|authorization['\"]?[ \t]*[:=][ \t]*"
    r"(?:b?['\"])?bearer)['\"]?[ \t]*[:= \t][ \t]*(?:b?['\"])?)([A-Za-z0-9+/=%_.~-]{4,})"
)


def secrets_of(settings: Settings | None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The values to mask, longest first so an overlap masks fully: every secret of
    ``settings`` (see :func:`tracker.settings.secret_values`) and of the environment."""
    found = environment_secrets(environ)
    if settings is not None:
        found |= secret_values(settings)
    # A one- or two-character "secret" would mask every occurrence of that text.
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` (longest first, see :func:`secrets_of`) and
    every credential-looking header value replaced by :data:`MASK`."""
    for secret in secrets:
        text = text.replace(secret, MASK)
    return _CREDENTIAL_FIELD.sub(rf"\1{MASK}", text)
