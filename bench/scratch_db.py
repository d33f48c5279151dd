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

from sqlalchemy import create_engine, text

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
