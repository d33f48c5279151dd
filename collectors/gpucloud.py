"""What the GPU-cloud collectors (Lambda, RunPod, Vast.ai, OCI) share.

They are small JSON APIs with one documented URL each, so the common parts are
where the request goes (an override keeps the documented path), how a refused
key is reported (one line naming the setting, never the key), and how an item
that cannot be priced becomes a counted skip instead of a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from collectors.base import CollectorError, MissingCredentials, NotConfigured
from collectors.http import HttpError
from tracker.models import InvalidOffer, to_decimal
from tracker.settings import ConfigError

__all__ = [
    "AUTH_STATUSES",
    "ItemSkipped",
    "api_key_or_skip",
    "documented_url",
    "number",
    "refused_or_failed",
    "text",
]

AUTH_STATUSES = frozenset({401, 403})


class ItemSkipped(Exception):
    """One payload item that should have been an offer but cannot be priced."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def documented_url(documented: str, origin: str | None) -> str:
    """``documented`` with its scheme, host and port replaced by ``origin`` (if set).

    Proxies and mirrors serve the provider's own paths, so only the origin moves.
    """
    if not origin:
        return documented
    base = urlsplit(origin)
    parts = urlsplit(documented)
    return urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))


def api_key_or_skip(provider: str, section: Any) -> str:
    """The provider's API key, or :class:`MissingCredentials` naming the setting.

    The runner prefixes the provider's name (``lambda: skipped: no API key: …``).

    ``section`` is a :class:`tracker.settings._KeyedCloudSettings` (Lambda, RunPod).
    """
    if not section.enabled:
        raise NotConfigured(f"disabled ({provider}.enabled = false)")
    try:
        key = section.resolved_api_key()
    except ConfigError as exc:
        raise MissingCredentials(str(exc)) from None
    if key is None:
        raise MissingCredentials(f"no API key: set {section.key_setting()}")
    return str(key.get_secret_value())


def refused_or_failed(provider: str, exc: HttpError, setting: str = "") -> CollectorError:
    """The run's error for a failed request: a refused key says which setting to fix."""
    if exc.status in AUTH_STATUSES and setting:
        return CollectorError(
            f"{provider}: the API key was refused (HTTP {exc.status}); check {setting}"
        )
    return CollectorError(f"{provider}: {exc}")


def text(item: Mapping[str, Any], field: str) -> str:
    value = item.get(field)
    if not isinstance(value, str) or not value.strip():
        raise ItemSkipped("malformed_item", f"{field} missing or not text ({value!r})")
    return value.strip()


def number(item: Mapping[str, Any], field: str, *, required: bool = True) -> Decimal | None:
    """A JSON number as Decimal (never through a binary float); ``None`` if absent."""
    value = item.get(field)
    if value is None:
        if required:
            raise ItemSkipped("malformed_item", f"{field} missing")
        return None
    if isinstance(value, str):  # these APIs send numbers; a string is a changed format
        raise ItemSkipped("malformed_item", f"{field} is text, not a number ({value!r})")
    try:
        return to_decimal(value, field)
    except InvalidOffer as exc:
        raise ItemSkipped("malformed_item", str(exc)) from None
