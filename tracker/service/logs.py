"""Log output for every command: secrets masked, libraries quiet, JSON for the service.

Every command (``-v``/``-vv``) and ``serve`` (``--log-level``) log through the
formatters here, so no level shows a credential: the values are masked (all of
``tracker.redact.secret_values`` of the settings plus boto3's and libpq's environment credentials) and
libraries whose DEBUG lines print request headers stay at WARNING unless
``GPU_TRACKER_LOG_LEVELS=botocore=DEBUG`` names them.

A service nobody watches is read through its logs by machines (Loki, CloudWatch,
``jq``), so ``--log-format json`` emits every ``extra=`` field as a top-level key.
Masking happens on the *formatted* line, because a secret can reach a log through
an exception message (a URL with a password, an echoed API key) that no caller
thought to redact.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal, TextIO

from tracker.redact import MASK, redact, secrets_of
from tracker.settings import Settings

__all__ = [
    "LOG_LEVELS_ENV",
    "MASK",
    "QUIET_LOGGERS",
    "JsonFormatter",
    "RedactingFormatter",
    "configure_logging",
    "logger_levels",
    "mask_secrets_of",
    "secrets_of",
]

log = logging.getLogger(__name__)
LogFormat = Literal["text", "json"]
LOG_LEVELS_ENV = "GPU_TRACKER_LOG_LEVELS"
"""``name=LEVEL[,name=LEVEL...]``: a library logger the user asks for by name."""
QUIET_LOGGERS = (
    "boto3",
    "botocore",  # at DEBUG it prints request headers: the session token, the signature
    "s3transfer",
    "urllib3",
    "requests",
    "google",  # google-auth and google-api-core: request headers with the API key
    "grpc",
    "httpx",
    "httpcore",
    "apscheduler",  # INFO at every start ("Adding job tentatively", "Added job") and run
)
"""Libraries kept at WARNING whatever ``-v``/``--log-level`` says: their DEBUG lines
carry credentials and their INFO lines drown the one line per run."""

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's copy of the message with ANSI colour codes
}


class RedactingFormatter(logging.Formatter):
    """A formatter that replaces each known secret with ``***`` in the final line."""

    def __init__(self, secrets: Iterable[str] = (), fmt: str | None = None) -> None:
        super().__init__(fmt or "%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.secrets = list(secrets)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """UTC with a ``Z``, to the millisecond (``2026-03-01T12:00:00.123Z``): the
        time every other output of the tracker uses, whatever the host's zone."""
        when = datetime.fromtimestamp(record.created, UTC)
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(record.msecs):03d}Z"

    def add_secrets(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted(set(self.secrets) | set(secrets), key=len, reverse=True)

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)

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


def logger_levels(spec: str) -> dict[str, int]:
    """``botocore=DEBUG,urllib3=INFO`` as levels by logger name; ValueError naming the
    bad part otherwise."""
    levels: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, sep, level = (x.strip() for x in part.partition("="))
        number = logging.getLevelName(level.upper())
        if not sep or not name or not isinstance(number, int):
            raise ValueError(
                f"{LOG_LEVELS_ENV}: expected name=LEVEL (e.g. botocore=DEBUG), got {part!r}"
            )
        levels[name] = number
    return levels


def configure_logging(
    settings: Settings | None = None,
    *,
    fmt: LogFormat = "text",
    level: str | int = "INFO",
    stream: TextIO | None = None,
    service: bool = True,
    environ: Mapping[str, str] | None = None,
) -> logging.Handler:
    """Route the root logger to ``stream`` (stderr) in ``fmt``, masking the secrets of
    ``settings`` and the environment; returns the handler.

    Libraries stay at WARNING unless ``$GPU_TRACKER_LOG_LEVELS`` names them. A
    ``service`` also keeps the runner's per-item lines out below DEBUG.
    """
    env = os.environ if environ is None else environ
    requested = logger_levels(env.get(LOG_LEVELS_ENV, ""))
    handler = logging.StreamHandler(stream or sys.stderr)
    secrets = secrets_of(settings, environ)
    if fmt == "json":
        handler.setFormatter(JsonFormatter(secrets))
    elif service:
        handler.setFormatter(RedactingFormatter(secrets))
    else:
        handler.setFormatter(RedactingFormatter(secrets, "%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    # The runner logs each skipped item and its own success line at INFO; the
    # service's one ``run`` line per run carries those counts.
    runner_quiet = service and root.level > logging.DEBUG
    logging.getLogger("tracker.collect").setLevel(logging.WARNING if runner_quiet else 0)
    for name, number in requested.items():
        logging.getLogger(name).setLevel(number)
    quiet = [name for name in QUIET_LOGGERS if name not in requested]
    log.debug("kept at WARNING (name one in %s to see it): %s", LOG_LEVELS_ENV, ", ".join(quiet))
    return handler


def mask_secrets_of(settings: Settings) -> None:
    """Add the secrets of ``settings`` to the formatters already installed, for a
    command that configured logging before it loaded its settings."""
    secrets = secrets_of(settings)
    for handler in logging.getLogger().handlers:
        if isinstance(handler.formatter, RedactingFormatter):
            handler.formatter.add_secrets(secrets)
