"""``discounts``: the account's discount rules (``[[discounts]]`` in the settings file),
whether each is in force and how many current offers it covers (rows from
:mod:`tracker.views.discounts`)."""

from __future__ import annotations

from typing import Any

import typer

from tracker.cli.context import CliError, open_store, settings_of
from tracker.cli.output import Column, FormatOption, OutputFormat, emit, err
from tracker.store import DatabaseError
from tracker.views.discounts import DISCOUNT_ROW_KEYS, discount_rows

__all__ = ["discounts", "register"]


def _terms(row: dict[str, Any]) -> str:
    if row["percent"] is not None:
        return f"{row['percent'].normalize():f} % off"
    return f"{row['price_per_hour'].normalize():f} {row['currency']}/h"


def _scope(row: dict[str, Any]) -> str:
    parts = [",".join(row[k]) for k in ("pricing", "instance_types", "regions") if row[k]]
    return " ".join(parts) or "every offer"


def _period(row: dict[str, Any]) -> str:
    start, end = row["valid_from"], row["valid_until"]
    if start is None and end is None:
        return "always"
    left = "" if start is None else start.strftime("%Y-%m-%d %H:%M")
    right = "" if end is None else end.strftime("%Y-%m-%d %H:%M")
    return f"{left} → {right}".strip()


TABLE = (
    Column("name", "rule"),
    Column("provider", "provider"),
    Column("", "covers", _scope, priority=1),
    Column("", "price", _terms),
    Column("", "valid (UTC)", _period, priority=2),
    Column("in_force", "in force", lambda v: "yes" if v else "no"),
    Column("matches", "offers", justify="right"),
    Column("applies_to", "priced", justify="right", priority=1),
    Column("flag", "", lambda v: f"! {v}" if v else ""),
)


def discounts(ctx: typer.Context, fmt: FormatOption = OutputFormat.table) -> None:
    """Each discount rule of the settings file, whether it is in force now, and how many
    current offers it covers (a rule covering none is flagged)."""
    settings = settings_of(ctx)
    if not settings.discounts:
        err("no discount rules: add [[discounts]] tables to the settings file")
        emit([], fmt, columns=DISCOUNT_ROW_KEYS, table=TABLE)
        return
    try:
        rows = discount_rows(open_store(ctx), settings)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    for row in rows:
        if row["flag"]:
            err(f"gpu-tracker: discount rule {row['name']!r}: {row['flag']}")
    emit(rows, fmt, columns=DISCOUNT_ROW_KEYS, table=TABLE)


def register(app: typer.Typer) -> None:
    app.command("discounts")(discounts)
