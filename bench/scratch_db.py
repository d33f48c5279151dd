"""A throwaway Postgres database for one benchmark run (every bench on Postgres needs one).

The server comes from ``GPU_TRACKER_DATABASE_URL``; the database gets a random name, is
created empty (the bench migrates it) and dropped at the end, even when the run fails,
unless ``keep`` (its URL is printed instead).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, make_url, text

from tracker.store.engine import normalize_url


@contextmanager
def scratch_database(*, keep: bool = False) -> Iterator[str]:
    """The URL of a new, empty database on the server ``GPU_TRACKER_DATABASE_URL`` names."""
    base = os.environ.get("GPU_TRACKER_DATABASE_URL", "")
    server = normalize_url(base) if base else None
    if server is None or server.get_backend_name() != "postgresql":
        sys.exit("set GPU_TRACKER_DATABASE_URL to a postgresql:// URL (the bench makes its own DB)")
    name = f"gpu_tracker_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        if keep:
            print(f"kept {server.set(database=name).render_as_string(hide_password=True)}")
        else:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def backend_cpu_seconds(url: str) -> float:
    """CPU seconds used so far by the server processes serving the database ``url``
    names (Linux: read from /proc; 0.0 elsewhere or for SQLite). With the process's
    own CPU time beside it, a bench says where a step's work went (Python or the
    database), which its wall-clock time on a shared machine does not."""
    name = make_url(url).database
    if not name or not os.path.isdir("/proc") or make_url(url).get_backend_name() != "postgresql":
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                words = f.read().split(b"\0")[0].split()
            if words[:1] != [b"postgres:"] or name.encode() not in words:
                continue
            with open(f"/proc/{entry.name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def quiesce(url: str, *, analyze: bool = True, wait_s: float = 120.0) -> None:
    """Leave nothing of the previous timed run to land inside the next one.

    Waits for any autovacuum worker on the database ``url`` names to end (its tables
    have autovacuum off from :func:`autovacuum_off`, but a worker already started, or
    one guarding against wraparound, still runs), then ``VACUUM ANALYZE`` of every table
    (the previous run's dead rows reclaimed and its statistics fresh: a re-collection
    planned on statistics of an empty store, or one autovacuum happened to refresh, is
    a different run), then a ``CHECKPOINT`` (the previous run's dirty pages written now,
    not by a checkpoint that starts during the timer). ``analyze=False`` skips the
    vacuum: a first collection is timed into a never-analysed store, as in production.
    """
    name = make_url(url).database
    engine = create_engine(normalize_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            deadline = time.monotonic() + wait_s
            while conn.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = :db AND backend_type = 'autovacuum worker'"
                ),
                {"db": name},
            ).scalar_one():
                if time.monotonic() > deadline:
                    sys.exit(f"autovacuum still running on {name} after {wait_s:.0f} s")
                time.sleep(0.2)
            if analyze:
                conn.execute(text("VACUUM ANALYZE"))
            conn.execute(text("CHECKPOINT"))
    finally:
        engine.dispose()


def autovacuum_off(url: str) -> list[str]:
    """Turn autovacuum off for every table of the throwaway database ``url`` names, so
    no worker starts inside a timed run (:func:`quiesce` vacuums and analyses instead);
    returns the tables. Nothing turns it back on: the database is dropped after the
    bench, and with ``keep=True`` its URL is printed for inspection, not for service."""
    engine = create_engine(normalize_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            tables = list(
                conn.execute(
                    text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
                ).scalars()
            )
            for table in tables:
                conn.exec_driver_sql(
                    f'ALTER TABLE "{table}" SET (autovacuum_enabled = off, '
                    "toast.autovacuum_enabled = off)"
                )
    finally:
        engine.dispose()
    return tables
