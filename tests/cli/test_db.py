"""``gpu-tracker db``: failures are one line, through the store's DatabaseError."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from tests.cli.test_cli import one_line_error
from tests.conftest import Run
from tracker.store.engine import Engine, make_engine


def test_an_unknown_revision_is_a_usage_error(cli: Run) -> None:
    msg = one_line_error(cli("db", "downgrade", "nosuch"), 2)
    assert msg.startswith("gpu-tracker: error: cannot downgrade to 'nosuch': ")
    assert "nosuch" in msg.split(": ", 3)[-1]  # alembic's own words name it too
    _, current, _, head = cli("db", "current").stdout.split()
    assert current == head  # the schema was left at head


def test_an_unreachable_database_is_one_line_for_db_commands(cli: Run) -> None:
    url = "postgresql://postgres:s3cret@127.0.0.1:1/nowhere"
    proc = cli("db", "current", extra_env={"GPU_TRACKER_DATABASE_URL": url})
    msg = one_line_error(proc, 1)
    assert msg.startswith(
        "gpu-tracker: error: database postgresql://postgres:***@127.0.0.1:1/nowhere: "
        "connection failed"
    )
    assert "s3cret" not in proc.stderr


def test_rebuild_rollups_restores_the_maintained_rollup_and_repeats(
    cli: Run, sheet: Path, db_url: str
) -> None:
    assert cli("import", str(sheet)).returncode == 0
    engine = make_engine(db_url)
    try:
        maintained = _rollup_rows(engine)
        assert maintained  # the import's run maintained it
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM price_rollups"))
        for _ in range(2):
            proc = cli("db", "rebuild-rollups")
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout.startswith("rollup rebuilt: ")
            assert f"{len(maintained)} intervals" in proc.stdout
            assert _rollup_rows(engine) == maintained
    finally:
        engine.dispose()


def _rollup_rows(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text(
                    "SELECT g.gpu_model, g.pricing, g.provider, g.region, g.currency, "
                    "r.series_id, r.price, r.first_seen, r.ended_at FROM price_rollups r "
                    "JOIN rollup_groups g ON g.id = r.group_id ORDER BY 1, 2, 3, 4, 5, 8"
                )
            )
        ]
