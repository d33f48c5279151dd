"""The rollup key and the temporary tables a run's upkeep stages by it.

A rollup group is (GPU model, pricing, provider, region, currency); its upkeep
recomputes a key's every currency together (:data:`tracker.store.schema.ROLLUP_KEY`).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, MetaData, String, Table

from tracker.store.schema import ROLLUP_KEY
from tracker.store.types import Money, UTCDateTime

__all__ = ["BATCH", "KEYS", "PROBE_LIMIT", "SEGMENTS", "Key", "key_list", "key_match"]

Key = tuple[str, str, str, str]
BATCH = 20_000
PROBE_LIMIT = 50_000
"""Up to this many new intervals a run finds their series one probe each."""

_temp = MetaData()
KEYS = Table(
    "gt_roll_keys",
    _temp,
    *(Column(c, String(128)) for c in ROLLUP_KEY),
    Column("t0", UTCDateTime),
    prefixes=["TEMPORARY"],
)
SEGMENTS = Table(
    "gt_roll_seg",
    _temp,
    *(Column(c, String(128)) for c in ROLLUP_KEY),
    Column("currency", String(3)),
    Column("group_id", BigInteger),
    Column("series_id", BigInteger),
    Column("price", Money),
    Column("first_seen", UTCDateTime),
    Column("ended_at", UTCDateTime),
    Column("t0", UTCDateTime),
    prefixes=["TEMPORARY"],
)
_KEY_MATCH = " AND ".join(f"{{a}}.{c} = {{b}}.{c}" for c in ROLLUP_KEY)


def key_match(a: str, b: str) -> str:
    """SQL: rows ``a`` and ``b`` (aliases) have the same key."""
    return _KEY_MATCH.format(a=a, b=b)


def key_list(prefix: str = "") -> str:
    """SQL: the key's columns, comma-separated (each ``prefix.column`` if given)."""
    return ", ".join(f"{prefix}.{c}" if prefix else c for c in ROLLUP_KEY)
