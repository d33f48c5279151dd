"""What every command needs: settings, a ready database, and one way to fail.

Commands raise :class:`CliError`; ``tracker.cli.main`` turns it into one line on
stderr and the exit code, so no command prints a traceback for bad input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from tracker.service.logs import mask_secrets_of
from tracker.settings import ConfigError, Settings, default_database_url, load_settings
from tracker.store import (
    DatabaseError,
    Engine,
    make_engine,
    migrate,
    normalize_url,
    ping,
    redact_url,
)

__all__ = [
    "MAX_ID",
    "MAX_ROWS",
    "USAGE",
    "CliError",
    "State",
    "engine_for",
    "open_store",
    "settings_of",
    "state_of",
]

USAGE = 2
FAILURE = 1
MAX_ID = 2**63 - 1
"""The largest row id either engine stores (a signed 64-bit integer): a larger one on
the command line is a usage error, not the driver's overflow traceback."""
MAX_ROWS = 10**9
"""The largest ``--limit``: more rows than any store holds, and a number SQL takes."""


class CliError(Exception):
    def __init__(self, message: str, code: int = FAILURE) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class State:
    config: Path | None = None
    database_url: str | None = None
    _settings: Settings | None = None
    _engines: dict[str, Engine] = field(default_factory=dict)

    def settings(self) -> Settings:
        if self._settings is None:
            overrides: dict[str, Any] = {}
            if self.database_url:
                overrides["database_url"] = self.database_url
            try:
                self._settings = load_settings(self.config, **overrides)
            except ConfigError as exc:
                raise CliError(str(exc), USAGE) from None
            mask_secrets_of(self._settings)
        return self._settings

    def close(self) -> None:
        """Dispose of the engines the command opened (their pooled connections)."""
        for engine in self._engines.values():
            engine.dispose()
        self._engines.clear()


def state_of(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    if not isinstance(obj, State):
        obj = State()
        ctx.find_root().obj = obj
    return obj


def settings_of(ctx: typer.Context) -> Settings:
    return state_of(ctx).settings()


def engine_for(url: str) -> Engine:
    """An engine for ``url``; a malformed or unsupported URL is a usage error, and so is
    a SQLite file in a folder that does not exist: only the default location's folder is
    created (a typo in an explicit path must not become a new, empty database)."""
    try:
        parsed = normalize_url(url)
    except DatabaseError as exc:
        raise CliError(str(exc), USAGE) from None
    path = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if path and path != ":memory:" and not path.startswith("file:"):
        folder = Path(path).expanduser().parent
        if not folder.is_dir() and url != default_database_url():
            raise CliError(
                f"database {redact_url(url)}: folder {folder} does not exist "
                "(create it first; only the default location is created for you)",
                USAGE,
            )
    try:
        return make_engine(url)
    except DatabaseError as exc:
        raise CliError(str(exc), USAGE) from None


def open_store(ctx: typer.Context, *, migrate_sqlite: bool = True) -> Engine:
    """A connected engine with an up-to-date schema, or a one-line CliError.

    The embedded SQLite default is created and migrated on first use; a server
    database is never migrated behind the operator's back (``db upgrade`` is).
    """
    settings = settings_of(ctx)
    url = settings.database_url
    state = state_of(ctx)
    if url in state._engines:
        return state._engines[url]
    shown = redact_url(url)
    engine = engine_for(url)
    try:
        ping(engine)
        if not migrate.is_up_to_date(engine):
            if engine.dialect.name == "sqlite" and migrate_sqlite:
                logging.getLogger(__name__).info("migrating %s to the current schema", shown)
                migrate.upgrade(engine)
            else:
                current = migrate.current_revision(engine) or "empty"
                raise CliError(
                    f"database {shown} schema is {current}, expected {migrate.head_revision()}: "
                    "run 'gpu-tracker db upgrade'"
                )
    except DatabaseError as exc:
        raise CliError(f"cannot use database {shown}: {exc.reason}") from None
    state._engines[url] = engine
    return engine
