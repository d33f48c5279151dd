"""A burst waits its turn instead of emptying the database pool for everyone.

Each route that reads the database holds one pooled connection while it runs in the
server's thread pool. Without a bound, 20 clients at once ask the pool (15
connections by default) for more than it has; those left waiting past the pool's
timeout become 503s, and the scheduler and the probes of ``serve``, which share the
pool, fail with them. So at most ``web.max_concurrent`` requests run at once; up to
``web.max_queued`` more wait in arrival order, each at most ``web.queue_seconds``;
a request beyond that is answered at once with a 429 and ``Retry-After`` (one line
of JSON), the answer a client's retry logic expects. The probes, /metrics and static
files never queue: they must answer while a burst is being served (nor does /mcp).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["UNQUEUED", "UNQUEUED_PREFIXES", "Admission"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

UNQUEUED = frozenset({"/livez", "/readyz", "/healthz", "/health", "/metrics"})
UNQUEUED_PREFIXES = ("/static/", "/mcp")
"""Static files read no database; /mcp keeps a stream open per client (it would hold
a turn for as long as the client stays)."""


class Admission:
    """ASGI middleware: ``limit`` requests at once, ``queued`` more waiting at most
    ``wait`` seconds each; the rest get a 429 with ``Retry-After``."""

    def __init__(self, app: App, *, limit: int, queued: int, wait: float) -> None:
        self.app = app
        self.limit = limit
        self.queued = queued
        self.wait = wait
        self.retry_after = str(max(1, math.ceil(wait / 2)))
        self._slots: asyncio.Semaphore | None = None
        self.waiting = 0

    def _semaphore(self) -> asyncio.Semaphore:
        # Made on first use, inside the server's event loop.
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limit)
        return self._slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path in UNQUEUED or path.startswith(UNQUEUED_PREFIXES):
            await self.app(scope, receive, send)
            return
        slots = self._semaphore()
        if slots.locked():
            if self.waiting >= self.queued:
                await self._busy(send, "too many requests waiting")
                return
            self.waiting += 1
            try:
                async with asyncio.timeout(self.wait):
                    await slots.acquire()
            except TimeoutError:
                await self._busy(send, f"no turn within {self.wait:g} s")
                return
            finally:
                self.waiting -= 1
        else:
            await slots.acquire()
        try:
            await self.app(scope, receive, send)
        finally:
            slots.release()

    async def _busy(self, send: Send, why: str) -> None:
        line = f"busy: {why}; retry after {self.retry_after} s"
        body = json.dumps({"error": line}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", self.retry_after.encode()),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
