"""The compact identity key of a series: a 64-bit hash of its identity columns.

Change detection joins a run's offers to ``series`` on this one indexed ``BIGINT``
instead of on the eight identity text columns. It is computed here, in Python, for
both engines (the same value on SQLite and Postgres, and across versions of either:
no database hash function is guaranteed stable), and stored in
``series.identity_hash`` (unique; migration 0007 back-filled existing series). The
full identity stays unique too, and the ingest verifies it for every offer it stages
in full, so a collision fails a run with a clear message instead of merging two offers
(an offer of a series its source lists is matched on the hash alone: tracker.store.ingest
says why that is sound).
"""

from __future__ import annotations

from hashlib import blake2b

__all__ = ["identity_hash"]

_SEPARATOR = "\x1f"  # ASCII unit separator: never part of a provider's names
_EMPTY = blake2b(digest_size=8)
"""Copied per call: a third cheaper than constructing the hasher from its arguments
(one call per offer of every run)."""


def identity_hash(key: tuple[str, ...]) -> int:
    """The signed 64-bit hash of an identity (``Offer.key()`` order, the values as text)."""
    h = _EMPTY.copy()
    h.update(_SEPARATOR.join(key).encode())
    return int.from_bytes(h.digest(), "big", signed=True)
