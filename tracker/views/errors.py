"""The read layer's one failure for bad input: the faces show its one line (the CLI
with exit 2, the web app as HTTP 400, tracker.api as the exception)."""

from __future__ import annotations

__all__ = ["ReadError"]


class ReadError(ValueError):
    """An argument a read cannot use (an unknown currency, an offer not stored); the
    message is one line naming the argument."""
