"""How an exception is told in one line (run rows, logs, health, CLI errors).

Operators read these in a run log or a ``/healthz`` body, where a multi-line
message or a traceback breaks the layout; one helper keeps every place alike.
"""

from __future__ import annotations

__all__ = ["one_line"]


def one_line(exc: BaseException, *, with_type: bool = True) -> str:
    """``Type: first line of the message`` (white space folded), or just the type.

    ``with_type=False`` gives the message alone, for errors whose type says nothing
    a reader needs (a provider's own exception wrapping its message).
    """
    text = " ".join(str(exc).strip().splitlines()[0].split()) if str(exc).strip() else ""
    if not with_type:
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
