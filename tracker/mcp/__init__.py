"""The MCP face: gpu-tracker's read layer as tools for an AI assistant.

Six read-only tools (``offers``, ``compare``, ``history``, ``recommend``, ``plan``,
``gpus``) take the CLI's options and answer with the CLI's JSON rows, read through
:mod:`tracker.views` like every face. ``gpu-tracker mcp`` serves them over stdio (a
desktop assistant launches it); ``serve`` also answers them at ``/mcp`` (streamable
HTTP) behind the dashboard's token. Like the CLI and the web, this face imports no other.
"""

from __future__ import annotations

import anyio

from tracker.mcp.http import MCP_PATH, mount
from tracker.mcp.server import DESCRIPTIONS, build_server
from tracker.mcp.tools import Reader, ToolInputError

__all__ = [
    "DESCRIPTIONS",
    "MCP_PATH",
    "Reader",
    "ToolInputError",
    "build_server",
    "mount",
    "run_stdio",
]


def run_stdio(reader: Reader) -> None:
    """Serve the tools on stdin/stdout until the client closes them (logs go to stderr)."""
    anyio.run(build_server(reader).run_stdio_async)
