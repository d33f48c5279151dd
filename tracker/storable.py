"""What the store can hold, checked where a record is made.

Numbers (money, GPU counts, sizes) are ``NUMERIC(20, 10)`` on Postgres and 10-decimal
strings on SQLite (:mod:`tracker.store.types`): at most 10 digits before the point and
10 after. A value the column would round to zero (``0.00000000004``, ``1e-400``) would be
stored as something it is not (a zero that later fails the domain model on every read);
one it cannot hold (``1e400``, ``12345678901``) fails Postgres's insert and is kept on
SQLite. Refusing both here, naming the field, makes the two engines agree and turns the
value into one rejected row instead of a stored time bomb or a failed run.

Text columns have the lengths of :mod:`tracker.store.schema` (Postgres refuses a longer
value, SQLite keeps it) and never hold NUL (Postgres refuses it in text, SQLite keeps
it): both are refused here too. Times a source dates its prices with must fall between
:data:`EARLIEST` and a few minutes from now. No ORM import: the domain model uses this.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from operator import attrgetter
from typing import Any

__all__ = [
    "EARLIEST",
    "FUTURE_SLACK",
    "NUMBER_PRECISION",
    "NUMBER_SCALE",
    "OFFER_TEXT_CHARS",
    "SMALLEST_STORED",
    "TOO_BIG",
    "number_problem",
    "offer_text_problem",
    "text_problem",
    "time_problem",
]

NUMBER_PRECISION = 20
NUMBER_SCALE = 10
SMALLEST_STORED = Decimal(5).scaleb(-(NUMBER_SCALE + 1))
"""0.00000000005: the smallest magnitude that does not round (half-up) to zero."""
TOO_BIG = Decimal(10) ** (NUMBER_PRECISION - NUMBER_SCALE) - SMALLEST_STORED
"""9999999999.99999999995: this and above round to 10^10, one digit more than fits."""
_LARGEST_SHOWN = "9999999999.9999999999"

OFFER_TEXT_CHARS: dict[str, int] = {
    "provider": 64,
    "instance_type": 128,
    "region": 64,
    "zone": 64,
    "payment_option": 32,
    "offering_class": 32,
    "os": 32,
    "gpu_model": 128,
    "gpu_raw_name": 128,
}
"""The ``series`` table's text column lengths (tests/test_storable.py keeps them equal)."""

_SHOWN = 40


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} characters)"


def number_problem(value: Decimal) -> str | None:
    """Why ``value`` (finite) cannot be stored as it is, or None when it can."""
    magnitude = abs(value)
    if magnitude >= TOO_BIG:
        return f"{_shown(value)} does not fit the stored number (at most {_LARGEST_SHOWN})"
    if magnitude and magnitude < SMALLEST_STORED:
        return f"{_shown(value)} would be stored as 0 (numbers keep {NUMBER_SCALE} decimals)"
    return None


_TEXT_CHARS = tuple(OFFER_TEXT_CHARS.items())
_TEXTS = attrgetter(*OFFER_TEXT_CHARS)
_SHORTEST = min(OFFER_TEXT_CHARS.values())


def offer_text_problem(offer: Any) -> tuple[str, str] | None:
    """The first text field of a validated offer (stripped) the store cannot hold, and
    why; None when it can. Cheap when all fit (attrgetter, a join, a max over map):
    collectors build hundreds of thousands of offers a run. Its numbers are checked by
    the model's own fast path against :data:`SMALLEST_STORED` and :data:`TOO_BIG`."""
    texts = _TEXTS(offer)
    if "\0" in "".join(texts) or max(map(len, texts)) > _SHORTEST:
        for (name, limit), text in zip(_TEXT_CHARS, texts, strict=True):
            problem = text_problem(text, limit)
            if problem is not None:
                return name, problem
    return None


def text_problem(value: str, limit: int) -> str | None:
    """Why the text ``value`` cannot be stored in a column of ``limit`` characters."""
    if "\0" in value:
        return f"contains a NUL character: {_shown(value)!r}"
    if len(value) > limit:
        return f"{len(value)} characters, at most {limit} are stored: {_shown(value)!r}"
    return None


FUTURE_SLACK = timedelta(minutes=5)
"""How far ahead of the clock a price's own time may be (clocks drift). A price dated
later would be the open price every real observation until then is older than, so later
collections would change nothing (``changed 0``) until that date."""
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
"""No cloud rented GPUs by the hour before this; an earlier time is a typo (year 1 also
fails SQLite's time text)."""


def time_problem(value: datetime, now: datetime) -> str | None:
    """Why ``value`` (aware) cannot be a price's time when the clock says ``now``."""
    try:
        value.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59-01:00 is in the year 10000 in UTC
        return f"{value.isoformat()} is outside the years 1-9999 in UTC"
    if value > now + FUTURE_SLACK:
        return f"{_iso(value)} is in the future (now is {_iso(now)})"
    if value < EARLIEST:
        return f"{_iso(value)} is before {EARLIEST:%Y-%m-%d}"
    return None


def _iso(value: datetime) -> str:
    # isoformat, not strftime: %Y writes the year 1 as "1", not "0001".
    return value.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"
