"""Stored rows the domain model refuses on read: skipped, counted, logged once.

Every write is validated (:mod:`tracker.models`, :mod:`tracker.storable`), but a row
stored before a rule existed (a memory size rounded to 0 by an older release), or edited
by hand, can still fail the model when read. One such row must not turn every listing,
ranking and page into a traceback: the reader leaves it out, counts it here, and says
so in one WARNING the first time it meets that row in this process (a dashboard reads
the same rows on every request; repeating the line would bury everything else).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from tracker.models import OFFER_KEY_FIELDS

__all__ = ["offer_key_text", "skip_unreadable", "unreadable_count"]

log = logging.getLogger(__name__)
_lock = threading.Lock()
_reported: set[tuple[str, object]] = set()
_skipped = 0


def skip_unreadable(kind: str, ident: object, problem: Exception) -> None:
    """Count one stored row of ``kind`` (e.g. ``offer``) left out of a read; the first
    time ``ident`` (its key) is met, log why and what to do about it."""
    global _skipped
    with _lock:
        _skipped += 1
        first = (kind, ident) not in _reported
        if first:
            _reported.add((kind, ident))
    if first:
        log.warning(
            "stored %s %s skipped: it fails validation (%s); correct it, or re-import its "
            "source with --full",
            kind,
            ident,
            problem,
        )


def offer_key_text(value_of: Callable[[str], Any]) -> str:
    """A stored offer's identity in a log line (``value_of`` a row's lookup by field)."""
    return "/".join(str(v) for v in map(value_of, OFFER_KEY_FIELDS) if v not in ("", None))


def unreadable_count() -> int:
    """Stored rows left out of reads since the process started (every read counts)."""
    return _skipped
