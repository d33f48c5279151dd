"""HEAD on every GET route: the GET's status and headers, without its body.

FastAPI registers a ``@router.get`` for GET alone, so HEAD (what uptime monitors and
link checkers send) was a 405. This ASGI middleware answers HEAD by running the GET
and dropping the body it sends, so the headers (``Content-Length`` included) are the
GET's own and no route has to declare HEAD itself. The app is read-only: nothing a
GET does may not be done for a HEAD.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["HeadAsGet"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class HeadAsGet:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app(dict(scope, method="GET"), receive, without_body)
