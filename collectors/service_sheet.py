"""Storage and transfer price sheets: what a plan charges for disks and egress.

The same CSV/JSON rules as offer sheets (UTF-8, a header line, ``file:line: field:
reason`` for a bad row while the good rows load), with the columns of a service price:
``provider, region, service, unit, price, currency, tier_start_gb, tier_end_gb``.
``import`` tells the two apart by the ``service`` column.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from collectors.base import SkipItem, parse_each
from collectors.pricesheet import SheetKind, SheetRow, read_sheet, sheet_text
from tracker.models import InvalidOffer
from tracker.service_prices import ServicePrice

__all__ = ["SERVICE_SHEET", "is_service_sheet", "read_service_prices"]

SERVICE_SHEET = SheetKind(
    required=("provider", "region", "service", "unit", "price", "currency"),
    allowed=(
        "provider",
        "region",
        "service",
        "unit",
        "price",
        "currency",
        "tier_start_gb",
        "tier_end_gb",
    ),
    json_key="service_prices",
)


def is_service_sheet(path: Path) -> bool:
    """A sheet whose header (CSV) or first object (JSON) has a ``service`` column."""
    raw = sheet_text(path)
    # A sheet that cannot be parsed is left to the offer reader, which reports it with
    # its line (a header field over the csv module's limit, JSON nested too deep).
    if path.suffix.lower() != ".json":
        try:
            header = next(csv.reader(raw.splitlines()), [])
        except csv.Error:
            return False
        return "service" in (h.strip() for h in header)
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return False
    if isinstance(data, dict):
        return isinstance(data.get("service_prices"), list)
    return (
        bool(data) and isinstance(data, list) and isinstance(data[0], dict) and "service" in data[0]
    )


def _text(row: SheetRow, key: str) -> str:
    value = row.values.get(key)
    return "" if value is None else str(value).strip()


def _price(row: SheetRow) -> ServicePrice:
    if "__error__" in row.values:
        raise InvalidOffer("row", str(row.values["__error__"]))
    for key in SERVICE_SHEET.required:
        if not _text(row, key):
            raise InvalidOffer(key, "is required")
    end = _text(row, "tier_end_gb")
    return ServicePrice(
        provider=_text(row, "provider"),
        region=_text(row, "region"),
        service=_text(row, "service"),  # type: ignore[arg-type]  # validated by ServicePrice
        unit=_text(row, "unit"),  # type: ignore[arg-type]
        price=_text(row, "price"),  # type: ignore[arg-type]
        currency=_text(row, "currency").upper(),
        tier_start_gb=_text(row, "tier_start_gb") or "0",  # type: ignore[arg-type]
        tier_end_gb=end or None,  # type: ignore[arg-type]
    )


def read_service_prices(path: Path, skip: Callable[[str, str], None]) -> Iterator[ServicePrice]:
    """The sheet's valid rows; each bad row goes to ``skip`` as ``file:line: field: reason``."""
    where = str(path)

    def parse(row: SheetRow) -> ServicePrice:
        try:
            return _price(row)
        except InvalidOffer as exc:
            raise SkipItem("invalid_row", f"{where}:{row.line}: {exc}") from None

    yield from parse_each(read_sheet(path, SERVICE_SHEET), parse, skip)
