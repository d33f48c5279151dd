"""``gpu-tracker mcp``: the MCP tools over stdio, for a desktop assistant to launch.

The assistant starts this command and speaks MCP on its stdin/stdout (so nothing else
may write to stdout: logs go to stderr); the tools read the store the command's
settings name, as ``offers`` or ``plan`` would (:mod:`tracker.mcp`).
"""

from __future__ import annotations

import typer

from tracker.cli.context import open_store, settings_of

__all__ = ["mcp", "register"]


def mcp(ctx: typer.Context) -> None:
    """Serve the read-only tools (offers, compare, history, recommend, plan, gpus) over
    MCP on stdin/stdout until the client disconnects (docs/cli.md: set-up)."""
    from tracker.mcp import Reader, run_stdio  # the SDK loads only for this command

    run_stdio(Reader(settings_of(ctx), open_store(ctx)))


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
