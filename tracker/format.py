"""How every figure reads to a person: one rule per kind of value, shared by all faces.

The CLI's tables, the dashboard's pages, Slack and email all render through these
functions, so a price, a percentage or a time looks the same wherever it is read.
JSON and CSV never come here: they keep the exact values (see ``iso_z`` for their times).

Money rounds half-even (as banks do) to cents from 1 up and to a tenth of a cent
below (0.526 stays readable, 3.673385 reads 3.67), with thousands separators; an exact
zero is ``0.00`` (nothing to read a tenth of a cent into: a zero egress cost is not
``0.000``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Final

__all__ = [
    "amount",
    "count",
    "gpus",
    "iso_z",
    "money",
    "per_gpu_hour",
    "per_hour",
    "percent",
    "pricing_label",
    "printable",
    "when",
]

_CENT: Final = Decimal("0.01")

_CONTROL: Final = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
# Bidirectional overrides and isolates reorder what follows them on screen ("Trojan
# Source"): shown as their code too.
_CONTROL.update(
    {c: f"\\u{c:04x}" for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}
)


def printable(text: str) -> str:
    """``text`` for a terminal: control characters (ESC, BEL, C1, bidi overrides) shown
    as their escape (``\\x1b``), so a name from a price sheet or a provider cannot
    retitle the terminal, move the cursor or reorder the line it is printed on."""
    return text.translate(_CONTROL)


_MILL: Final = Decimal("0.001")
_TENTH: Final = Decimal("0.1")

_PRICING: Final[dict[str, str]] = {
    "on_demand": "on-demand",
    "spot": "spot",
    "reserved_1y": "reserved 1y",
    "reserved_3y": "reserved 3y",
    "savings_plan_1y": "savings plan 1y",
    "savings_plan_3y": "savings plan 3y",
    "capacity_block": "capacity block",
}
_PAYMENT: Final[dict[str, str]] = {
    "no_upfront": "no upfront",
    "partial_upfront": "partial upfront",
    "all_upfront": "all upfront",
}


def _decimal(value: Decimal | int | float | str) -> Decimal:
    # str() first: a float's repr is its shortest exact decimal, not its binary expansion.
    return value if isinstance(value, Decimal) else Decimal(str(value))


def amount(value: Decimal | int | float | str) -> str:
    """A sum of money without its currency: ``19,143.69``, ``55.04``, ``0.526``, ``0.00``."""
    d = _decimal(value)
    if d == 0:
        return "0.00"
    places = _CENT if abs(d) >= 1 else _MILL
    return f"{d.quantize(places, rounding=ROUND_HALF_EVEN):,f}"


def money(value: Decimal | int | float | str, currency: str = "USD") -> str:
    """``16.51 USD``: the amount and its ISO currency, as people compare offers."""
    return f"{amount(value)} {currency}"


def per_hour(value: Decimal | int | float | str, currency: str = "USD") -> str:
    """``16.51 USD/h``: the price of a whole instance for an hour."""
    return f"{money(value, currency)}/h"


def per_gpu_hour(value: Decimal | int | float | str, currency: str = "USD") -> str:
    """``2.06 USD/GPU-h``: the figure that compares instances of different sizes."""
    return f"{money(value, currency)}/GPU-h"


def percent(value: Decimal | int | float | str, *, signed: bool = False) -> str:
    """``70 %``, ``12.5 %`` (one decimal at most); ``signed`` writes ``+3 %`` / ``-70 %``."""
    d = _decimal(value).quantize(_TENTH, rounding=ROUND_HALF_EVEN)
    text = f"{d:,f}".removesuffix(".0")
    if text in ("-0", "0"):
        text = "0"
    elif signed and d > 0:
        text = f"+{text}"
    return f"{text} %"


def when(moment: datetime) -> str:
    """``2026-12-01 13:06 UTC``: minutes are what a reader of prices needs."""
    if moment.tzinfo is None:
        raise ValueError(f"naive datetime {moment!r}: every time here is aware UTC")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def iso_z(moment: datetime) -> str:
    """ISO-8601 in UTC with a ``Z`` (``2026-12-01T13:06:00Z``): the machine-readable form."""
    if moment.tzinfo is None:
        raise ValueError(f"naive datetime {moment!r}: every time here is aware UTC")
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def pricing_label(pricing: str, payment_option: str | None = None) -> str:
    """``on-demand``, ``spot``, ``reserved 1y, no upfront``: the way providers' pages say it.

    An unknown pricing model reads as itself (underscores as spaces) rather than failing:
    a third-party collector may store one this module has not heard of.
    """
    label = _PRICING.get(pricing, pricing.replace("_", " "))
    if payment_option:
        label += ", " + _PAYMENT.get(payment_option, payment_option.replace("_", " "))
    return label


def count(n: Decimal | int | float | str, unit: str) -> str:
    """``1 GPU``, ``8 GPUs``, ``0 offers``, ``0.5 GPU`` (a fraction of one is singular)."""
    d = _decimal(n)
    text = f"{d.normalize():f}" if d != d.to_integral_value() else f"{int(d):,}"
    return f"{text} {unit}" if 0 < abs(d) <= 1 else f"{text} {unit}s"


def gpus(n: Decimal | int | float | str, model: str) -> str:
    """``8× H100-SXM``: the GPU every offer line names first."""
    d = _decimal(n)
    text = f"{d.normalize():f}" if d != d.to_integral_value() else str(int(d))
    return f"{text}× {model}"
