"""The names people type (``--provider``, ``--region``): checked once, answered alike.

Every command that reads stored offers checks its ``--provider`` and ``--region`` here
before reading, so a name that cannot match anything is a usage error (exit 2) with
the same one line in ``offers``, ``history``, ``compare``, ``export``, ``recommend`` and
``runs``, instead of an empty table in some and an error in others; ``--gpu`` names get
the answer :func:`tracker.history.args.require_gpus` gives in ``history``.

A provider is known when a collector of that name is registered or some stored offer
comes from it (a price sheet may name providers no collector covers). A region is
checked for its form only: one stored by no offer just matches nothing.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

import typer

from tracker import registry
from tracker.cli.context import USAGE, CliError, settings_of
from tracker.history.args import HistoryArgumentError
from tracker.store import DatabaseError, Engine
from tracker.store.reads import stored_providers
from tracker.views.history import gpu_selection

__all__ = ["check_gpus", "check_providers", "check_regions", "unknown_provider"]

_REGION = re.compile(r"^[\w][\w .:/,()+-]*$")
"""Letters (any script), digits and the separators regions are written with
(``us-east-1``, ``cn-north-4``, ``eu-frankfurt-1``, ``Quebec, CA``)."""
MAX_REGION = 100


def unknown_provider(name: str, known: Iterable[str], *, what: str) -> CliError:
    """``--provider 'x': unknown provider (...)``, with the closest known name if any."""
    known = sorted(set(known))
    close = difflib.get_close_matches(name.lower(), known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    listed = ", ".join(known) or "none"
    return CliError(f"--provider {name!r}: unknown provider ({hint}{what}: {listed})", USAGE)


def check_providers(ctx: typer.Context, engine: Engine, names: Sequence[str] | None) -> None:
    """Exit 2 for a ``--provider`` that is neither a registered collector nor stored."""
    if not names:
        return
    known = set(registry.available(settings_of(ctx)))
    if all(n in known for n in names):
        return
    try:
        known |= stored_providers(engine)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    for name in names:
        if name not in known:
            raise unknown_provider(name, known, what="collectors and stored providers")


def check_gpus(engine: Engine, names: Sequence[str] | None) -> None:
    """Exit 2 for a ``--gpu`` that is neither in the catalog nor stored (the line
    ``history`` gives: :func:`tracker.history.args.require_gpus`)."""
    if not names:
        return
    try:
        gpu_selection(engine, names)
    except HistoryArgumentError as exc:
        raise CliError(str(exc), USAGE) from None
    except DatabaseError as exc:
        raise CliError(str(exc)) from None


def check_regions(names: Sequence[str] | None) -> None:
    """Exit 2 for a ``--region`` that cannot be a region's name (empty, padded, odd
    characters); a well-formed one that no offer has simply matches nothing."""
    for name in names or ():
        if not name or name != name.strip() or len(name) > MAX_REGION or not _REGION.match(name):
            raise CliError(
                f"--region {name!r}: not a region name (e.g. us-east-1, eastus, cn-north-4)",
                USAGE,
            )
