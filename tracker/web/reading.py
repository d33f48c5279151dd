"""The pages' reading aids: :mod:`tracker.format` as Jinja filters, GPU links, the
cheapest figure of a column.

Pages show figures the way the CLI and the notifications do (one rounding rule,
thousands separators, ``2026-12-01 13:06 UTC``, ``on-demand``, ``1 GPU``); the exact
values stay in each cell's ``data-value`` for sorting and in /api/v1 for scripts.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment
from markupsafe import Markup, escape

from tracker import format as fmt
from tracker.catalog import all_specs

__all__ = ["gpu_href", "install", "lowest"]

DASH = "–"
CATALOG = frozenset(spec.name for spec in all_specs())


def _amount(value: Any) -> str:
    return DASH if value is None or value == "" else fmt.amount(value)


def _percent(value: Any, signed: bool = False) -> str:
    return DASH if value is None or value == "" else fmt.percent(value, signed=signed)


def _when(value: datetime | str | None) -> str:
    """A time for reading; the health report's ISO strings are parsed first."""
    if value is None or value == "":
        return ""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return fmt.when(moment)


def _pricing(value: Any, payment_option: str | None = None) -> str:
    return fmt.pricing_label(str(getattr(value, "value", value)), payment_option)


def _plain(value: Any) -> str:
    """A datasheet figure or a size: exact, without trailing zeros (``80``, ``1.5``)."""
    if value is None:
        return DASH
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, Decimal | float):
        d = Decimal(str(value)).normalize()
        return f"{d:,f}" if d != d.to_integral_value() else f"{int(d):,}"
    return str(value)


def gpu_href(model: str) -> str:
    """A catalog model's page; a model the catalog does not know, its offers."""
    if model in CATALOG:
        return "/gpu?" + urlencode({"name": model})
    return "/offers?" + urlencode({"gpu": model})


def gpu_link(model: str, count: Any = None) -> Markup:
    """The model's name (``8× H100-SXM`` with a count) linking to its page."""
    text = fmt.gpus(count, model) if count is not None else model
    return Markup(f'<a class="gpu" href="{escape(gpu_href(model))}">{escape(text)}</a>')


def lowest(values: Iterable[Any]) -> Decimal | None:
    """The cheapest figure among ``values`` (None and blanks ignored), the one a column
    marks; None when the column is empty."""
    found = [Decimal(str(v)) for v in values if v is not None and v != ""]
    return min(found) if found else None


def is_lowest(value: Any, low: Decimal | None) -> bool:
    return low is not None and value is not None and value != "" and Decimal(str(value)) == low


def install(env: Environment) -> None:
    env.filters.update(
        money=_amount,
        percent=_percent,
        change=lambda v: _percent(v, signed=True),
        when=_when,
        pricing=_pricing,
        plain=_plain,
        count=fmt.count,
        gpu_count=lambda v: fmt.count(v, "GPU"),
    )
    env.globals.update(gpu_link=gpu_link, gpu_href=gpu_href, lowest=lowest, is_lowest=is_lowest)
