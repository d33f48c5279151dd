"""The store: the only package that speaks SQL.

Grouped by concept, each a sub-package whose ``__init__`` is its public front:
:mod:`~tracker.store.ingest` (the write path), :mod:`~tracker.store.rollup` (the cheapest-price
rollup's upkeep), :mod:`~tracker.store.reads` (offers, history, plan prices),
:mod:`~tracker.store.outbox` (alerts), :mod:`~tracker.store.runs` (the run log) and
:mod:`~tracker.store.series` (FX, service prices, availability, rankings). The engine, schema,
column types, locks, migrations and shared SQL helpers sit at the top; this module re-exports
what code outside the store needs of them.
"""

from tracker.store.engine import (
    DatabaseError,
    Engine,
    make_engine,
    normalize_url,
    ping,
    redact_url,
    url_password,
)
from tracker.store.errors import database_errors
from tracker.store.locks import JobLocks, PostgresLocks, locks_for
from tracker.store.schema import MAX_SOURCE_CHARS, Series
from tracker.store.types import quantize_money

__all__ = [
    "MAX_SOURCE_CHARS",
    "DatabaseError",
    "Engine",
    "JobLocks",
    "PostgresLocks",
    "Series",
    "database_errors",
    "locks_for",
    "make_engine",
    "normalize_url",
    "ping",
    "quantize_money",
    "redact_url",
    "url_password",
]
