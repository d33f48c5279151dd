"""Schema migrations through Alembic, driven in code so no alembic.ini is needed."""

from __future__ import annotations

import importlib
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

__all__ = ["current_revision", "downgrade", "head_revision", "is_up_to_date", "upgrade"]


def _config() -> Config:
    cfg = Config()
    # tracker.migrations is the top-level migrations/ folder (see pyproject's package-dir).
    package = importlib.import_module("tracker.migrations")
    cfg.set_main_option("script_location", str(Path(str(package.__file__)).parent))
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    cfg = _config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def downgrade(engine: Engine, revision: str) -> None:
    cfg = _config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def is_up_to_date(engine: Engine) -> bool:
    return current_revision(engine) == head_revision()
