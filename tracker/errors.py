"""How an exception is told in one line (run rows, logs, health, CLI errors), and
let go of once told.

Operators read these in a run log or a ``/healthz`` body, where a multi-line
message or a traceback breaks the layout; one helper keeps every place alike.
"""

from __future__ import annotations

import traceback

__all__ = ["drop_frames", "one_line"]


def one_line(exc: BaseException, *, with_type: bool = True) -> str:
    """``Type: first line of the message`` (white space folded), or just the type.

    ``with_type=False`` gives the message alone, for errors whose type says nothing
    a reader needs (a provider's own exception wrapping its message).
    """
    text = " ".join(str(exc).strip().splitlines()[0].split()) if str(exc).strip() else ""
    if not with_type:
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def drop_frames(exc: BaseException) -> None:
    """Clear the local variables of the finished frames ``exc`` and its causes passed
    through, keeping the exceptions and their messages.

    A traceback holds every frame it unwound, and a frame holds its locals: the retry
    state that holds the exception back (a cycle), the client, its TLS context. Cleared,
    they are freed as soon as the exception is, without waiting for the cyclic garbage
    collector. Frames still running are left alone."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if current.__traceback__ is not None:
            traceback.clear_frames(current.__traceback__)
        current = current.__cause__ or current.__context__
