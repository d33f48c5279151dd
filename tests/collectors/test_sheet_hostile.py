"""Hostile price sheets (issue 44): structure errors fail the run in one line naming the
line, bad values are rejected rows naming line and field, and both engines agree."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine

from collectors.base import CollectorError
from collectors.pricesheet import PriceSheetCollector, SheetRow, parse_row, read_sheet
from tracker.collect import run_collector
from tracker.models import RunStatus
from tracker.settings import Settings
from tracker.store import reads

HEADER = "provider,instance_type,region,pricing,gpu_model,gpu_count,price_per_hour,currency"
GOOD = "acme,a{n},us,on_demand,H100,1,2.50,USD"


def _lines(*rows: str) -> str:
    return "\n".join((HEADER, *rows)) + "\n"


def _read(tmp_path: Path, name: str, text: str) -> list[SheetRow]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return list(read_sheet(path))


def test_an_unterminated_quote_names_its_line(tmp_path: Path) -> None:
    """Line 3 opens a quote nobody closes: before, the csv module folded lines 3-5 into
    one field of one row, which was rejected, and the CLI said "the other rows were
    loaded" when only line 2 was."""
    text = _lines(GOOD.format(n=1), 'acme,"a2,us,on_demand,H100,1,2.50,USD', GOOD.format(n=3))
    with pytest.raises(CollectorError, match=re.escape("q.csv:3: unterminated quote")):
        _read(tmp_path, "q.csv", text)


def test_a_quote_closed_lines_later_names_the_span(tmp_path: Path) -> None:
    text = _lines(
        GOOD.format(n=1),
        'acme,"a2,us,on_demand,H100,1,2.50,USD',
        GOOD.format(n=3),
        'acme,a4",us,on_demand,H100,1,2.50,USD',
        GOOD.format(n=5),
    )
    with pytest.raises(CollectorError, match=re.escape("q.csv:3: a quoted field opened here runs over lines 3-5")):  # fmt: skip
        _read(tmp_path, "q.csv", text)


def test_a_field_over_the_csv_limit_names_its_line(tmp_path: Path) -> None:
    """The csv module stops at 131,072 characters in one field (its field_size_limit)."""
    text = _lines(GOOD.format(n=1), "acme," + "x" * 131_073 + ",us,on_demand,H100,1,2.5,USD")
    with pytest.raises(CollectorError, match=re.escape("big.csv:3: unreadable CSV: a field is longer than 131,072 characters")):  # fmt: skip
        _read(tmp_path, "big.csv", text)


def test_json_nested_200k_deep_is_one_line(tmp_path: Path) -> None:
    """json.loads raised RecursionError, which no caller expected."""
    text = '{"offers": [\n' + "[" * 200_000 + "]" * 200_000 + "\n]}"
    with pytest.raises(CollectorError, match=re.escape("deep.json:2: invalid JSON: nested deeper than 100 levels")):  # fmt: skip
        _read(tmp_path, "deep.json", text)


def test_a_quoted_comma_and_blank_lines_still_read(tmp_path: Path) -> None:
    """What the stricter reader must still take: a quoted field on one line, blank lines
    (line numbers keep counting them), a short row."""
    text = _lines('acme,"a,1",us,on_demand,H100,1,2.50,USD', "", GOOD.format(n=2), "acme,a3")
    rows = _read(tmp_path, "ok.csv", text)
    assert [(r.line, r.values["instance_type"]) for r in rows] == [(2, "a,1"), (4, "a2"), (5, "a3")]
    assert rows[2].values["currency"] is None


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("memory_gib", "0.00000000004", "memory_gib: 4E-11 would be stored as 0"),
        ("gpu_count", "1e-400", "gpu_count: 1E-400 would be stored as 0"),
        ("price_per_hour", "1e400", "price_per_hour: 1E+400 does not fit the stored number"),
        ("price_per_hour", "12345678901", "price_per_hour: 12345678901 does not fit"),
        ("price_per_hour", "1" * 38, "price_per_hour: 11111111111111111111111111111111111111 does not fit"),
        ("observed_at", "2099-01-01T00:00:00Z", "observed_at: 2099-01-01T00:00:00Z is in the future"),
        ("observed_at", "9999-12-31T23:59:59Z", "observed_at: 9999-12-31T23:59:59Z is in the future"),
        ("observed_at", "0001-01-01", "observed_at: 0001-01-01T00:00:00Z is before 2000-01-01"),
    ],
)  # fmt: skip
def test_a_bad_value_is_a_rejected_row(column: str, value: str, message: str) -> None:
    values = dict(
        zip(HEADER.split(","), GOOD.format(n=1).split(","), strict=True), **{column: value}
    )
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    with pytest.raises(Exception, match=re.escape(f"s.csv:7: {message}")) as raised:
        parse_row(SheetRow(7, values), "s.csv", Settings(), now)
    assert type(raised.value).__name__ == "SkipItem"


def test_observed_at_a_minute_ahead_is_kept() -> None:
    """Clocks drift: up to five minutes ahead of the clock is a price of now."""
    values = dict(zip(HEADER.split(","), GOOD.format(n=1).split(","), strict=True))
    values["observed_at"] = "2026-12-04T12:04:00Z"
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    offer = parse_row(SheetRow(2, values), "s.csv", Settings(), now)
    assert offer.observed_at == datetime(2026, 12, 4, 12, 4, tzinfo=UTC)


def _run(engine: Engine, path: Path) -> tuple[RunStatus, str | None, int, int]:
    settings = Settings(pricesheet={"path": path})
    summary = run_collector(engine, PriceSheetCollector.from_settings(settings), settings)
    return summary.status, summary.error, summary.skipped, len(reads.current_offers(engine))


def test_good_rows_load_beside_values_the_store_cannot_hold(engine: Engine, tmp_path: Path) -> None:
    """Before: 0.00000000004 was stored as 0 (then every listing failed), 12345678901
    failed the whole run on Postgres only, a NUL failed Postgres and was stored on SQLite.
    Now the same three rows are refused on both engines and the good one loads."""
    path = tmp_path / "mixed.json"
    rows = [
        {"memory_gib": "0.00000000004"},
        {"price_per_hour": 12345678901},
        {"provider": "a\u0000b"},
        {},
    ]
    base = {"provider": "acme", "region": "us", "pricing": "on_demand", "gpu_model": "H100",
            "gpu_count": 1, "price_per_hour": "2.5", "currency": "USD"}  # fmt: skip
    offers = [{**base, "instance_type": f"a{i}", **row} for i, row in enumerate(rows)]
    path.write_text(json.dumps({"offers": offers}))
    assert _run(engine, path) == (RunStatus.SUCCEEDED, None, 3, 1)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("q.csv", _lines(GOOD.format(n=1), 'acme,"a2,us,on_demand,H100,1,2.5,USD', GOOD.format(n=3))),
        ("big.csv", _lines(GOOD.format(n=1), "acme," + "x" * 131_073 + ",us,on_demand,H100,1,2,USD")),
        ("deep.json", "[" * 200_000 + "]" * 200_000),
    ],
)  # fmt: skip
def test_a_broken_sheet_fails_its_run_and_writes_nothing(
    engine: Engine, tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    status, error, _, stored = _run(engine, path)
    assert status is RunStatus.FAILED and error is not None and f"{name}:" in error
    assert stored == 0  # line 2 was good, and is not half-written without the rest
    (run,) = reads.recent_runs(engine)
    assert run.status == "failed" and run.error is not None and f"{name}:" in run.error


def test_a_price_from_the_future_is_refused_and_later_prices_still_change(
    engine: Engine, tmp_path: Path
) -> None:
    """Before: a 2099 row was stored as the open price, and the real price imported after
    it changed nothing (``changed 0``) because every real observation was older."""
    future = _lines("acme,a1,us,on_demand,H100,1,9.99,USD,2099-01-01T00:00:00Z")
    path = tmp_path / "future.csv"
    path.write_text(future.replace(HEADER, HEADER + ",observed_at"))
    assert _run(engine, path)[:3] == (RunStatus.SUCCEEDED, None, 1)
    path.write_text(_lines("acme,a1,us,on_demand,H100,1,2.50,USD"))
    assert _run(engine, path) == (RunStatus.SUCCEEDED, None, 0, 1)
    (stored,) = reads.current_offers(engine)
    assert stored.offer.price_per_hour == Decimal("2.5")


def test_any_collector_dating_a_price_in_the_future_is_a_counted_skip(engine: Engine) -> None:
    """The same rule for every collector's own dated prices (AWS spot history), not only
    sheets: the run goes on and says what it skipped."""
    from tests.conftest import make_offer
    from tests.listed_collector import ListCollector

    late = make_offer(instance_type="late.1", observed_at=datetime(2099, 1, 1, tzinfo=UTC))
    now = make_offer(instance_type="now.1")
    summary = run_collector(engine, ListCollector([late, now]), Settings())
    assert summary.status is RunStatus.SUCCEEDED and summary.stats.offers_seen == 1
    assert summary.skip_reasons == {"bad_observed_at": 1}
    assert (
        "testcloud late.1 us-east-1: observed_at: 2099-01-01T00:00:00Z is in the future"
        in (summary.skip_details[0])
    )
    assert [s.offer.instance_type for s in reads.current_offers(engine)] == ["now.1"]
