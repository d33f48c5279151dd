"""The net price an offer listing is ordered by, as SQL: the account's discount rules
(tracker.discounts) in force at one moment, as one ``CASE`` over the series columns.

The first rule (file order) that covers an offer sets its price, as in Python: a
percentage scales the USD figure, a fixed net price is its USD figure (a constant), and
a fixed price without a rate keeps the list figure. Globs match like
:func:`fnmatch.fnmatchcase` without ``[...]`` sets (:func:`orderable` says whether a
rule set can be written here): ``GLOB`` on SQLite, ``LIKE`` with escapes on Postgres,
both case-sensitive. The order is by floats, as the list order is; the figures shown
are computed exactly when read.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import and_, case, literal, or_

from tracker.discounts import DiscountRule
from tracker.store.schema import Series

__all__ = ["NetRule", "net_usd_order", "orderable"]

NetRule = tuple[DiscountRule, Decimal | None]
"""A rule in force, with its fixed price in USD (None: a percentage, or no rate)."""


def orderable(rules: Sequence[DiscountRule]) -> bool:
    """Whether every glob of ``rules`` can be matched in SQL (no ``[...]`` sets)."""
    return not any("[" in g for r in rules for g in (*r.instance_types, *r.regions))


def _like(glob: str) -> str:
    escaped = glob.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%").replace("?", "_")


def _glob(column: Any, pattern: str, dialect: str) -> Any:
    if dialect == "sqlite":
        return column.op("GLOB")(literal(pattern))
    return column.like(_like(pattern), escape="\\")


def _covers(rule: DiscountRule, dialect: str) -> Any:
    clauses = [Series.provider == rule.provider]
    if rule.pricing:
        clauses.append(Series.pricing.in_([p.value for p in rule.pricing]))
    for column, globs in (
        (Series.instance_type, rule.instance_types),
        (Series.region, rule.regions),
    ):
        if globs:
            clauses.append(or_(*(_glob(column, g, dialect) for g in globs)))
    return and_(*clauses)


def net_usd_order(usd: Any, rules: Sequence[NetRule], dialect: str) -> Any:
    """``usd`` (the list USD expression) as the net figure under ``rules``."""
    if not rules:
        return usd
    whens = []
    for rule, fixed_usd in rules:
        if rule.percent is not None:
            then = usd * float((Decimal(100) - rule.percent) / Decimal(100))
        elif fixed_usd is not None:
            then = literal(float(fixed_usd))
        else:
            then = usd
        whens.append((_covers(rule, dialect), then))
    return case(*whens, else_=usd)
