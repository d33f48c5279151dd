"""CSV that a spreadsheet opens as data, never as formulas (OWASP's CSV injection rule).

A provider name, an instance type or a sheet's own text such as ``=HYPERLINK(...)`` or
``+cmd|' /C calc'!A0`` is run by Excel, LibreOffice or Google Sheets when the export is
opened. OWASP's rule: a cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return gets a leading ``'``, which every spreadsheet shows as text. A number is
left as it is (a negative price change is ``-0.5``, a number, not a formula), so columns
of figures stay figures. JSON output is not touched: it is never run. Every CSV writer
(the CLI's listings, ``export``) writes through :func:`csv_writer`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

__all__ = ["SafeCsvWriter", "csv_writer", "safe_cell"]

_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text (numbers unchanged)."""
    if text.startswith(_TRIGGERS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


class _Writer(Protocol):
    def writerow(self, row: Iterable[Any], /) -> Any: ...


class SafeCsvWriter:
    """A ``csv.writer`` whose every cell goes through :func:`safe_cell`."""

    def __init__(self, writer: _Writer) -> None:
        self._writer = writer

    def writerow(self, row: Iterable[str]) -> None:
        self._writer.writerow([safe_cell(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[str]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(out: Any) -> SafeCsvWriter:
    """The CSV writer of every CSV the tracker writes (``\\n`` line ends, as before)."""
    return SafeCsvWriter(csv.writer(out, lineterminator="\n"))
