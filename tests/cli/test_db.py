"""``gpu-tracker db``: failures are one line, through the store's DatabaseError."""

from __future__ import annotations

from tests.cli.test_cli import one_line_error
from tests.conftest import Run


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
