"""A throwaway Postgres database for one benchmark run (every bench on Postgres needs one).

The server comes from ``GPU_TRACKER_DATABASE_URL``; the database gets a random name, is
created empty (the bench migrates it) and dropped at the end, even when the run fails,
unless ``keep`` (its URL is printed instead).
"""

from __future__ import annotations

import os
import sys
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
