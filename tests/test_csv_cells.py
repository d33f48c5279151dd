"""tracker.csv_cells: OWASP's CSV-injection rule, and numbers left as numbers (issue 44)."""

from __future__ import annotations

import csv
import io

import pytest

from tracker.csv_cells import csv_writer, safe_cell


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("-us", "'-us"),
        ("-", "'-"),
        ("+", "'+"),
    ],
)
def test_a_cell_a_spreadsheet_would_run_is_text(cell: str, written: str) -> None:
    assert safe_cell(cell) == written


@pytest.mark.parametrize(
    "cell", ["-0.5", "-12", "+3", "-1.5E-7", "2.5", "0", "", "acme", "a=b", "us-east-1", "1e400"]
)
def test_numbers_and_plain_text_are_unchanged(cell: str) -> None:
    """A negative price change is a number, not a formula; ``=`` inside a cell is text."""
    assert safe_cell(cell) == cell


def test_the_writer_applies_it_to_every_cell() -> None:
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(["provider", "change"])
    writer.writerows([["=1+1", "-0.25"], ["@x", "-3"]])
    assert out.getvalue() == "provider,change\n'=1+1,-0.25\n'@x,-3\n"
    assert list(csv.reader(io.StringIO(out.getvalue())))[1] == ["'=1+1", "-0.25"]
