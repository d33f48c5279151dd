"""``gpu-tracker db``: schema migrations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

import typer

from tracker.cli.context import USAGE, CliError, engine_for, settings_of
from tracker.store import DatabaseError, Engine, database_errors, migrate, redact_url, rollup

db = typer.Typer(help="Database schema.", no_args_is_help=True)
T = TypeVar("T")


def _with_engine(ctx: typer.Context, action: Callable[[Engine], T]) -> T:
    url = settings_of(ctx).database_url
    engine = engine_for(url)
    try:
        return action(engine)
    except migrate.RevisionError as exc:
        raise CliError(str(exc), USAGE) from None
    except DatabaseError as exc:
        raise CliError(f"database {redact_url(url)}: {exc.reason}") from None
    finally:
        engine.dispose()


@db.command("upgrade")
def upgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
) -> None:
    """Apply migrations (creates the schema on an empty database)."""

    def run(engine: Engine) -> str | None:
        migrate.upgrade(engine, revision)
        return migrate.current_revision(engine)

    current = _with_engine(ctx, run)
    typer.echo(f"{redact_url(settings_of(ctx).database_url)}: schema at {current}")


@db.command("downgrade")
def downgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision ('base' drops everything).")],
) -> None:
    """Revert migrations down to REVISION."""

    def run(engine: Engine) -> str | None:
        migrate.downgrade(engine, revision)
        return migrate.current_revision(engine)

    current = _with_engine(ctx, run)
    typer.echo(f"{redact_url(settings_of(ctx).database_url)}: schema at {current or 'base'}")


@db.command("current")
def current(ctx: typer.Context) -> None:
    """Show the schema revision of the database and the newest one known."""
    revision = _with_engine(ctx, migrate.current_revision)
    typer.echo(f"current {revision or 'base'}  head {migrate.head_revision()}")


@db.command("rebuild-rollups")
def rebuild_rollups(ctx: typer.Context) -> None:
    """Recompute the cheapest-price rollup from the stored price intervals (safe to repeat:
    the same history gives the same rollup)."""

    def run(engine: Engine) -> rollup.RebuildStats:
        with database_errors("cannot rebuild the rollup"), engine.begin() as conn:
            rollup.hold_upkeep(conn)  # no run keeps it meanwhile
            return rollup.rebuild(conn)

    stats = _with_engine(ctx, run)
    typer.echo(
        f"rollup rebuilt: {stats.groups} groups, {stats.intervals} intervals "
        f"from {stats.source_intervals} price intervals"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(db, name="db")
