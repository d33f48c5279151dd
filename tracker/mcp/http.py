"""The tools over streamable HTTP, as one route of an existing Starlette/FastAPI app.

``serve`` runs uvicorn without a lifespan, so the SDK's session manager (whose task
group a lifespan would start) is made for each request instead: the server is
stateless and answers in JSON, so a request needs nothing from the one before. The
route sits inside the host app's middleware, so the dashboard's token guards it as it
guards /api/v1; the SDK's DNS-rebinding check is off for the same reason (the token and
``web.http`` decide who reaches it, as for every other route).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from tracker.mcp.server import build_server
from tracker.mcp.tools import Reader

__all__ = ["MCP_PATH", "McpEndpoint", "mount"]

MCP_PATH = "/mcp"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class McpEndpoint:
    """An ASGI app answering MCP requests at :data:`MCP_PATH` (a class, so Starlette's
    ``Route`` hands it the raw ASGI call rather than a Request)."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        manager = self.server.session_manager  # this request's: no await since it was made
        async with manager.run():
            await app(scope, receive, send)


def mount(app: Starlette, reader: Reader) -> None:
    """Answer MCP at ``/mcp`` on ``app`` (inside its middleware: its token applies)."""
    app.router.routes.append(Route(MCP_PATH, endpoint=McpEndpoint(build_server(reader))))
