"""Log output for the long-running service: one JSON object per line, secrets masked.

A service nobody watches is read through its logs by machines (Loki, CloudWatch,
``jq``), so ``--log-format json`` emits every ``extra=`` field as a top-level key.
Masking happens on the *formatted* line, because a secret can reach a log through
an exception message (a URL with a password, an echoed API key) that no caller
thought to redact.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal, TextIO

from pydantic import BaseModel, SecretStr
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from tracker.settings import Settings

__all__ = ["MASK", "JsonFormatter", "RedactingFormatter", "configure_logging", "secrets_of"]

MASK = "***"
LogFormat = Literal["text", "json"]

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
}


def secrets_of(settings: Settings) -> list[str]:
    """Every secret value the settings hold: SecretStr fields (and their ``*_file``
    contents) and the database password, longest first so overlaps mask fully."""
    found: set[str] = set()

    def walk(model: BaseModel) -> None:
        for name in type(model).model_fields:
            value = getattr(model, name)
            if isinstance(value, SecretStr):
                found.add(value.get_secret_value())
            elif isinstance(value, BaseModel):
                walk(value)
        resolve = getattr(model, "resolved_api_key", None)
        if callable(resolve):
            try:
                key = resolve()
            except Exception:  # an unreadable *_file is reported where it is used
                key = None
            if isinstance(key, SecretStr):
                found.add(key.get_secret_value())

    walk(settings)
    try:
        password = make_url(settings.database_url).password
    except ArgumentError:
        password = None
    if password:
        found.add(str(password))
    # A one- or two-character "secret" would mask every occurrence of that text.
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


class RedactingFormatter(logging.Formatter):
    """A formatter that replaces each known secret with ``***`` in the final line."""

    def __init__(self, secrets: Iterable[str] = (), fmt: str | None = None) -> None:
        super().__init__(fmt or "%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.secrets = list(secrets)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def format(self, record: logging.LogRecord) -> str:
        return self.redact(super().format(record))


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, frozenset | set | tuple):
        return sorted(str(v) for v in value)
    return value


class JsonFormatter(RedactingFormatter):
    """One JSON object per record: ts, level, logger, message, then ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                payload[key] = _jsonable(value)
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return self.redact(json.dumps(payload, default=str, ensure_ascii=False))


def configure_logging(
    settings: Settings,
    *,
    fmt: LogFormat = "text",
    level: str = "INFO",
    stream: TextIO | None = None,
) -> logging.Handler:
    """Route the root logger to ``stream`` (stderr) in ``fmt``; returns the handler."""
    handler = logging.StreamHandler(stream or sys.stderr)
    secrets = secrets_of(settings)
    handler.setFormatter(JsonFormatter(secrets) if fmt == "json" else RedactingFormatter(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # Per-request lines from these libraries would drown the one line per run.
    for noisy in ("httpx", "httpcore", "apscheduler.executors.default"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if root.level > logging.DEBUG:
        # The runner logs each skipped item and its own success line at INFO; the
        # service's one ``run`` line per run carries those counts.
        logging.getLogger("tracker.collect").setLevel(logging.WARNING)
    return handler
