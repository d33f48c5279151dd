"""Price sheets (CSV or JSON): negotiated/private prices, and seeding history.

The sheet is the user's own data, so it is held to the same standard as a
provider payload: a malformed row is reported with ``file:line`` and the reason
and the good rows still load. An ``observed_at`` column back-fills history: the
runner applies rows in time order as if each had been collected at that time.
"""

from __future__ import annotations

import codecs
import csv
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

from collectors.base import CollectorError, NotConfigured, RunContext, SkipItem, parse_each
from tracker.catalog import resolve_gpu
from tracker.models import (
    AttributeValue,
    Availability,
    InvalidOffer,
    Offer,
    PricingModel,
    to_decimal,
)
from tracker.settings import Settings
from tracker.storable import time_problem

__all__ = [
    "COLUMNS",
    "OFFER_SHEET",
    "OPTIONAL_COLUMNS",
    "PriceSheetCollector",
    "SheetKind",
    "SheetRow",
    "read_sheet",
    "sheet_text",
]

log = logging.getLogger(__name__)

COLUMNS = (
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "memory_gib",
    "price_per_hour",
    "currency",
)
OPTIONAL_COLUMNS = (
    "observed_at",
    "availability",
    "price_per_hour_usd",
    "payment_option",
    "offering_class",
    "os",
    "interconnect",
    "fabric",
    "network_gbps",
)
REQUIRED = (
    "provider",
    "instance_type",
    "region",
    "pricing",
    "gpu_model",
    "gpu_count",
    "price_per_hour",
    "currency",
)


class SheetRow:
    __slots__ = ("line", "values")

    def __init__(self, line: int, values: Mapping[str, Any]) -> None:
        self.line = line
        self.values = values


@dataclass(frozen=True, slots=True)
class SheetKind:
    """The columns one kind of sheet has (offers, or service prices) and its JSON key."""

    required: tuple[str, ...]
    allowed: tuple[str, ...]
    json_key: str


OFFER_SHEET = SheetKind(REQUIRED, COLUMNS + OPTIONAL_COLUMNS, "offers")


def read_sheet(path: Path, kind: SheetKind = OFFER_SHEET) -> Iterator[SheetRow]:
    """Rows of a CSV (header line required) or JSON (list of objects, or ``{"offers": [...]}``).

    Raises :class:`CollectorError` for a file that cannot be read at all.
    """
    raw = sheet_text(path)
    if path.suffix.lower() == ".json":
        yield from _json_rows(path, raw, kind)
    else:
        yield from _csv_rows(path, raw, kind)


def sheet_text(path: Path) -> str:
    """The file as UTF-8 text; raises :class:`CollectorError` naming it otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CollectorError(f"cannot read price sheet {path}: {exc.strerror}") from None
    return _utf8_text(path, data)


def _utf8_text(path: Path, data: bytes) -> str:
    """The sheet as text; anything but UTF-8 text (UTF-16 from a spreadsheet's "Unicode
    text" export, a binary file) is refused in one line, before any row is read."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise CollectorError(f"{path}: UTF-16 text, not UTF-8: save the sheet as UTF-8")
    nul = data.find(b"\0")  # never in text; UTF-16 without a byte-order mark is full of them
    if nul >= 0:
        raise CollectorError(f"{path}: not a text file (NUL byte at offset {nul})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CollectorError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def _csv_rows(path: Path, raw: str, kind: SheetKind) -> Iterator[SheetRow]:
    lines = raw.splitlines()
    reader = csv.reader(lines)
    records = iter(reader)
    header = [h.strip() for h in (_records(path, lambda: next(records, None)) or [])]
    missing = [c for c in kind.required if c not in header]
    if missing:
        raise CollectorError(f"{path}:1: missing column(s): {', '.join(missing)}")
    unknown = [h for h in header if h not in kind.allowed]
    if unknown:
        raise CollectorError(f"{path}:1: unknown column(s): {', '.join(unknown)}")
    while True:
        start = reader.line_num + 1
        record = _records(path, lambda: next(records, None), start)
        if record is None:
            return
        line = reader.line_num
        if line != start:
            raise CollectorError(_runaway_quote(path, start, line, len(lines)))
        if not any(v.strip() for v in record):
            continue  # blank line
        if len(record) > len(header):
            yield SheetRow(line, {"__error__": "more fields than the header has"})
            continue
        # A short record's missing fields are None, as csv.DictReader has them.
        values: dict[str, Any] = dict.fromkeys(header)
        values.update(zip(header, (v.strip() for v in record), strict=False))
        yield SheetRow(line, values)


_T = TypeVar("_T")


def _records(path: Path, read: Callable[[], _T], start: int = 1) -> _T:
    """``read()`` of the CSV reader, its errors (a field over the csv module's limit, a
    NUL) one :class:`CollectorError` naming the line where the record began: the reader
    cannot go on past them, so the run fails and stores nothing."""
    try:
        return read()
    except csv.Error as exc:
        reason = str(exc)
        if "field limit" in reason:
            reason = f"a field is longer than {csv.field_size_limit():,} characters"
        raise CollectorError(f"{path}:{start}: unreadable CSV: {reason}") from None


def _runaway_quote(path: Path, start: int, end: int, lines: int) -> str:
    """A record read over several lines: a quote opened at ``start`` and closed (or not)
    later, swallowing the rows between. No sheet column holds a line break, so this is
    never a real row: the run fails rather than guess which rows were meant."""
    if end >= lines:
        return (
            f"{path}:{start}: unterminated quote: the quoted field opened here runs to "
            f"the end of the file (line {lines})"
        )
    return (
        f"{path}:{start}: a quoted field opened here runs over lines {start}-{end} "
        "(an unterminated quote?)"
    )


def _json_rows(path: Path, raw: str, kind: SheetKind) -> Iterator[SheetRow]:
    try:
        data = json.loads(raw, parse_float=str, parse_int=str)
    except json.JSONDecodeError as exc:
        raise CollectorError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        line = _deep_line(raw, _MAX_DEPTH)
        raise CollectorError(
            f"{path}:{line}: invalid JSON: nested deeper than {_MAX_DEPTH} levels"
        ) from None
    key = kind.json_key
    if isinstance(data, dict) and isinstance(data.get(key), list):
        data = data[key]
    if not isinstance(data, list):
        raise CollectorError(f'{path}: expected a list of {key} or {{"{key}": [...]}}')
    for n, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            yield SheetRow(n, {"__error__": "not an object"})
        else:
            yield SheetRow(n, item)


_MAX_DEPTH = 100
"""A sheet is a list of flat objects (three levels with its ``{"offers": [...]}``);
the JSON parser recurses once per level and gives up near Python's recursion limit."""


def _deep_line(raw: str, limit: int) -> int:
    """The line where the JSON text first nests deeper than ``limit`` (strings skipped)."""
    depth, line, in_string, escaped = 0, 1, False, False
    for char in raw:
        if char == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line
        elif char in "]}":
            depth -= 1
    return line


def _text(values: Mapping[str, Any], key: str) -> str:
    value = values.get(key)
    return "" if value is None else str(value).strip()


def _optional_number(values: Mapping[str, Any], key: str) -> Any:
    value = _text(values, key)
    return to_decimal(value, key) if value else None


def parse_row(row: SheetRow, where: str, settings: Settings, now: datetime | None = None) -> Offer:
    """One sheet row as an offer; raises SkipItem (``invalid_row``) naming the file,
    the line and the field. ``now`` (default: the clock) bounds ``observed_at``."""
    try:
        return _offer(row, settings, now or datetime.now(UTC))
    except InvalidOffer as exc:
        raise SkipItem("invalid_row", f"{where}:{row.line}: {exc}") from None


def _observed_at(text: str, now: datetime) -> datetime | None:
    if not text:
        return None
    try:
        observed_at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidOffer("observed_at", f"not ISO-8601: {text!r}") from None
    if observed_at.tzinfo is None:
        observed_at = observed_at.replace(tzinfo=UTC)
    problem = time_problem(observed_at, now)
    if problem is not None:
        raise InvalidOffer("observed_at", problem)
    return observed_at


def _offer(row: SheetRow, settings: Settings, now: datetime) -> Offer:
    v = row.values
    if "__error__" in v:
        raise InvalidOffer("row", str(v["__error__"]))
    extra = set(v) - set(COLUMNS) - set(OPTIONAL_COLUMNS)
    if extra:
        raise InvalidOffer("row", f"unknown field(s): {', '.join(sorted(extra))}")
    for key in REQUIRED:
        if not _text(v, key):
            raise InvalidOffer(key, "is required")
    currency = _text(v, "currency").upper()
    price = to_decimal(_text(v, "price_per_hour"), "price_per_hour")
    # The price is stored in its own currency; USD is computed when read, at the rate
    # in force. A sheet's own price_per_hour_usd is therefore never the offer's USD
    # figure: on a USD row it must equal the price (a typo check), on another
    # currency's row it is kept as the attribute sheet_price_per_hour_usd (what the
    # sheet's author converted at, for reference).
    attributes: dict[str, AttributeValue] = {}
    usd_text = _text(v, "price_per_hour_usd")
    if usd_text:
        usd = to_decimal(usd_text, "price_per_hour_usd")
        if currency == "USD" and usd != price:
            raise InvalidOffer("price_per_hour_usd", f"{usd} differs from the USD price {price}")
        if currency != "USD":
            attributes["sheet_price_per_hour_usd"] = usd
    memory = _optional_number(v, "gpu_memory_gib")
    match = resolve_gpu(_text(v, "gpu_model"), memory_hint=memory)
    if memory is None and match.spec is not None:
        memory = match.spec.vram_gib
    observed_at = _observed_at(_text(v, "observed_at"), now)
    return Offer(
        provider=_text(v, "provider"),
        instance_type=_text(v, "instance_type"),
        region=_text(v, "region"),
        zone=_text(v, "zone"),
        pricing=_text(v, "pricing"),  # type: ignore[arg-type]  # validated by Offer
        payment_option=_text(v, "payment_option"),
        offering_class=_text(v, "offering_class"),
        os=_text(v, "os") or "linux",
        interconnect=_text(v, "interconnect") or "unknown",  # type: ignore[arg-type]
        fabric=_text(v, "fabric") or "unknown",  # type: ignore[arg-type]
        network_gbps=_optional_number(v, "network_gbps"),
        price_per_hour=price,
        currency=currency,
        gpu_model=match.name,
        gpu_raw_name=_text(v, "gpu_model"),
        gpu_known=match.known,
        gpu_count=to_decimal(_text(v, "gpu_count"), "gpu_count"),
        gpu_memory_gib=memory,
        vcpus=_optional_number(v, "vcpus"),
        memory_gib=_optional_number(v, "memory_gib"),
        availability=_availability(v),
        observed_at=observed_at,
        attributes=attributes,
    )


def _availability(v: Mapping[str, Any]) -> Availability:
    """The optional ``availability`` column: ``available``, ``low``, ``unavailable`` or
    ``unknown`` (any case); empty is unknown. With ``observed_at``, rows of one offer at
    several times back-fill its availability series (and so its obtainability)."""
    value = _text(v, "availability").lower()
    if not value:
        return Availability.UNKNOWN
    try:
        return Availability(value)
    except ValueError:
        allowed = ", ".join(a.value for a in Availability)
        raise InvalidOffer(
            "availability", f"{_text(v, 'availability')!r} is not one of {allowed}"
        ) from None


class PriceSheetCollector:
    """Loads one price sheet; configured by ``pricesheet.path``."""

    name: ClassVar[str] = "pricesheet"
    description: ClassVar[str] = "CSV/JSON price sheet (negotiated prices, back-filled history)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(PricingModel)
    """A sheet may hold rows of any pricing model."""
    spot_fetched_separately: ClassVar[bool] = False
    """One file holds every row: a spot-only run would read all of it anyway."""

    def __init__(self, path: Path, settings: Settings) -> None:
        self.path = path
        self.settings = settings

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        path = settings.pricesheet.path
        if path is None:
            raise NotConfigured(
                "no price sheet configured (set pricesheet.path or GPU_TRACKER_PRICESHEET__PATH)"
            )
        return cls(path, settings)

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        where = str(self.path)

        now = datetime.now(UTC)

        def parse(row: SheetRow) -> tuple[int, Offer]:
            return row.line, parse_row(row, where, self.settings, now)

        for line, offer in parse_each(read_sheet(self.path), parse, ctx.skip):
            if not offer.gpu_known:
                log.warning(
                    "%s:%d: unknown GPU %r kept as raw name", where, line, offer.gpu_raw_name
                )
            yield offer
