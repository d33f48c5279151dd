"""The ECB collector: parsing the real files, choosing daily or 90-day, and a run that
stores the rates as compact series (SQLite and Postgres)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from sqlalchemy import Engine, func, select

from collectors.base import CollectorError
from collectors.fx import DAILY_URL, HISTORY_URL, FxCollector, parse_rates
from tests.collectors.conftest import run_context
from tests.fx.ecb_server import FIXTURES, EcbServer
from tracker.collect import run_collector
from tracker.models import RunStatus
from tracker.settings import Settings
from tracker.store import series as fx_store
from tracker.store.schema import FxRate

TODAY = date(2020, 12, 2)


def settings(endpoint: str | None = None) -> Settings:
    return Settings(fx={"endpoint_url": endpoint} if endpoint else {})


def test_daily_file_parses_every_rate_of_its_day() -> None:
    ctx = run_context()
    rates = parse_rates((FIXTURES / "eurofxref-daily.xml").read_bytes(), ctx.skip)
    assert len(rates) == 30  # the 30 <Cube currency=…> of 2024-06-28
    assert {r.day for r in rates} == {date(2024, 6, 28)}
    by = {r.currency: r.per_eur for r in rates}
    assert by["USD"] == Decimal("1.0705") and by["CNY"] == Decimal("7.7748")
    assert by["IDR"] == Decimal("17487.21")
    assert not ctx.skips


def test_ninety_day_file_parses_every_day() -> None:
    ctx = run_context()
    rates = parse_rates((FIXTURES / "eurofxref-hist-90d.xml").read_bytes(), ctx.skip)
    assert len(rates) == 5 * 32  # five days of 32 currencies (HRK and RUB still listed)
    days = sorted({r.day for r in rates})
    assert days == [date(2020, 11, d) for d in (25, 26, 27, 30)] + [date(2020, 12, 1)]


def test_malformed_rates_are_counted_skips_and_a_foreign_document_fails() -> None:
    ctx = run_context()
    xml = (FIXTURES / "eurofxref-daily.xml").read_text()
    xml = xml.replace("rate='171.94'", "rate='n/a'").replace("currency='BGN'", "currency='B1'")
    rates = parse_rates(xml, ctx.skip)
    assert len(rates) == 28
    assert ctx.skips == Counter({"malformed_rate": 2})
    assert any("JPY" in d and "n/a" in d for d in ctx.details)
    with pytest.raises(CollectorError, match="not XML"):
        parse_rates("<html", ctx.skip)
    with pytest.raises(CollectorError, match="no dated"):
        parse_rates("<html><body>maintenance</body></html>", ctx.skip)


def test_back_fill_when_the_store_is_empty_or_behind() -> None:
    collector = FxCollector(settings(), today=lambda: TODAY)
    assert collector.url(None) == HISTORY_URL
    assert collector.url(date(2020, 12, 1)) == DAILY_URL
    # newest stored rate 5 days old > fx.backfill_after_days (4): fill the gap
    assert collector.url(date(2020, 11, 27)) == HISTORY_URL
    moved = FxCollector(settings("http://127.0.0.1:9"), today=lambda: TODAY)
    assert moved.url(date(2020, 12, 1)) == "http://127.0.0.1:9/stats/eurofxref/eurofxref-daily.xml"


def test_endpoint_override_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.settings import load_settings

    monkeypatch.setenv("GPU_TRACKER_FX__ENDPOINT_URL", "http://127.0.0.1:8089")
    assert load_settings().fx.endpoint_url == "http://127.0.0.1:8089"


def _rows(engine: Engine, currency: str) -> list[tuple[datetime, Decimal]]:
    with engine.connect() as conn:
        stmt = (
            select(FxRate.valid_from, FxRate.per_eur)
            .where(FxRate.currency == currency)
            .order_by(FxRate.valid_from)
        )
        return [(r.valid_from, r.per_eur) for r in conn.execute(stmt)]


def day(d: int, month: int = 11) -> datetime:
    return datetime(2020, month, d, tzinfo=UTC)


def test_a_run_stores_compact_series_and_a_rerun_adds_nothing(
    engine: Engine, ecb: EcbServer
) -> None:
    collector = FxCollector(settings(ecb.url), today=lambda: TODAY)
    summary = run_collector(engine, collector, collector.settings)
    assert summary.status is RunStatus.SUCCEEDED, summary.error
    assert ecb.requests == Counter({"/stats/eurofxref/eurofxref-hist-90d.xml": 1})
    # BGN is pegged (1.9558 all five days): one row
    assert _rows(engine, "BGN") == [(day(25), Decimal("1.9558"))]
    # NZD 1.7036, 1.7, 1.7 (unchanged: no row), 1.7027, 1.701
    assert _rows(engine, "NZD") == [
        (day(25), Decimal("1.7036")),
        (day(26), Decimal("1.7")),
        (day(30), Decimal("1.7027")),
        (day(1, 12), Decimal("1.701")),
    ]
    assert len(_rows(engine, "USD")) == 5  # moves every day
    assert summary.stats.offers_seen == 160
    assert summary.stats.new_series == 32  # currencies
    with engine.connect() as conn:
        stored = conn.execute(select(func.count()).select_from(FxRate)).scalar_one()
    assert summary.stats.price_changes == stored
    assert summary.stats.unchanged == 160 - stored

    # the next day: the store holds 2020-12-01, so only the daily file is fetched
    again = run_collector(engine, collector, collector.settings)
    assert again.status is RunStatus.SUCCEEDED, again.error
    assert ecb.requests["/stats/eurofxref/eurofxref-daily.xml"] == 1
    assert again.stats.new_series == 0 and again.stats.offers_seen == 30


def test_weekends_carry_the_last_rate(engine: Engine, ecb: EcbServer) -> None:
    collector = FxCollector(settings(ecb.url), today=lambda: TODAY)
    run_collector(engine, collector, collector.settings)
    rates = fx_store.load_rates(engine)
    saturday = datetime(2020, 11, 28, 12, tzinfo=UTC)
    # Friday 2020-11-27: 1 EUR = 1.1922 USD = 7.8422 CNY → 1 CNY = 1.1922 / 7.8422 USD
    assert rates.usd_per_unit("CNY", saturday) == Decimal("1.1922") / Decimal("7.8422")
    assert rates.usd_per_unit("EUR", saturday) == Decimal("1.1922")
    # before the first stored day there is no rate at all (never 1.0)
    assert rates.usd_per_unit("CNY", day(24)) is None


def test_a_failed_fetch_stores_nothing_and_says_why(engine: Engine, ecb: EcbServer) -> None:
    ecb.status = 404
    collector = FxCollector(settings(ecb.url), today=lambda: TODAY)
    summary = run_collector(engine, collector, collector.settings)
    assert summary.status is RunStatus.FAILED
    assert summary.error is not None and "404" in summary.error
    assert "\n" not in summary.error
    assert fx_store.latest_day(engine) is None
