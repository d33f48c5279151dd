"""How long the requests of this run may still be retried: a deadline per context.

The service sets one around each run (half the job's cadence), so a provider that is
down is asked again at the next cadence instead of retried into it; the shared HTTP
layer (:mod:`collectors.http`) reads it. Apart from that layer so that setting a
deadline imports no HTTP library.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["retry_deadline", "seconds_left"]

_DEADLINE: ContextVar[float | None] = ContextVar("gpu_tracker_http_deadline", default=None)
"""The ``time.monotonic()`` after which no request made in this context is retried."""


@contextmanager
def retry_deadline(seconds: float | None) -> Iterator[None]:
    """No request made inside (in this thread or task) is retried past ``seconds``
    from now: a retry whose wait would end later is not made, and a retry's timeout is
    held to what is left. A first attempt keeps its timeout, so a run that is slow but
    succeeding is not cut; ``None`` sets no deadline."""
    token = _DEADLINE.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float | None:
    """Seconds until the retry deadline (None: no deadline)."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()
