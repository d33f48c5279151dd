"""Schema migrations through Alembic, driven in code so no alembic.ini is needed."""

from __future__ import annotations

import importlib
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Engine

from tracker.store.engine import DatabaseError
from tracker.store.errors import database_errors

__all__ = [
    "RevisionError",
    "current_revision",
    "downgrade",
    "head_revision",
    "is_up_to_date",
    "upgrade",
]


class RevisionError(DatabaseError):
    """The revision asked for is unknown or not reachable that way (a usage error)."""


def _config() -> Config:
    cfg = Config()
    # tracker.migrations is the top-level migrations/ folder (see pyproject's package-dir).
    package = importlib.import_module("tracker.migrations")
    cfg.set_main_option("script_location", str(Path(str(package.__file__)).parent))
    return cfg


def _migrate(engine: Engine, step: str, revision: str) -> None:
    cfg = _config()
    try:
        with database_errors(f"cannot {step} the schema"), engine.begin() as conn:
            cfg.attributes["connection"] = conn
            getattr(command, step)(cfg, revision)
    except CommandError as exc:
        raise RevisionError(f"cannot {step} to {revision!r}: {exc}", reason=str(exc)) from None


def upgrade(engine: Engine, revision: str = "head") -> None:
    _migrate(engine, "upgrade", revision)


def downgrade(engine: Engine, revision: str) -> None:
    _migrate(engine, "downgrade", revision)


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with database_errors("cannot read the schema revision"), engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def is_up_to_date(engine: Engine) -> bool:
    return current_revision(engine) == head_revision()
