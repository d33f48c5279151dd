"""Rates in force and conversions (pure), and the price history in original currency
(the store, SQLite and Postgres): a rate change alone never opens a price interval."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from sqlalchemy import Engine, func, select

from tests.conftest import make_offer
from tracker.fx import Conversion, RatePoint, Rates, parse_currency
from tracker.models import Offer
from tracker.store import reads
from tracker.store.ingest import Ingest
from tracker.store.schema import PricePoint

D = Decimal
T0 = datetime(2024, 6, 28, tzinfo=UTC)


def ecb_20240628() -> Rates:
    # eurofxref-daily.xml of 2024-06-28: 1 EUR = 1.0705 USD = 7.7748 CNY
    return Rates([RatePoint("USD", T0, D("1.0705")), RatePoint("CNY", T0, D("7.7748"))])


def _ingest(engine: Engine, offers: list[Offer], when: datetime) -> None:
    with engine.begin() as conn:
        ingest = Ingest(conn, source="testcloud", run_time=when)
        for o in offers:
            ingest.add(o)
        ingest.finish(None)


def test_usd_per_unit_is_the_ratio_of_two_euro_rates() -> None:
    rates = ecb_20240628()
    # 1 CNY = 1.0705 / 7.7748 = 0.13768842928… USD
    assert rates.usd_per_unit("CNY").quantize(D("1e-10")) == D("0.1376884293")
    # 30 CNY/h = 30 × 0.13768842928… = 4.1306528785… USD/h
    assert rates.to_usd(D(30), "CNY") == D("4.1306528785")
    assert rates.to_usd(D("2.50"), "EUR") == D("2.67625")  # 2.50 × 1.0705
    assert rates.to_usd(D("2.50"), "USD") == D("2.50")
    # 10 USD in CNY = 10 / 0.13768842928… = 10 × 7.7748 / 1.0705 = 72.627744045…
    assert rates.convert(D(10), "USD", "CNY") == D("72.6277440448")
    assert rates.convert(D(30), "CNY", "CNY") == D(30)  # own currency: exact


def test_missing_rate_is_none_never_one_and_the_manual_rate_fills_only_gaps() -> None:
    points = [RatePoint("USD", T0, D("1.0705")), RatePoint("CNY", T0, D("7.7748"))]
    rates = Rates(points, {"AED": D("0.27"), "CNY": D("0.5")})
    assert rates.to_usd(D(100), "AED") == D("27.00")  # no ECB series: the setting
    assert rates.to_usd(D(30), "CNY") == D("4.1306528785")  # ECB series win
    bare = Rates()
    assert bare.to_usd(D(30), "CNY") is None
    assert bare.usd_per_unit("EUR") is None  # EUR needs the USD/EUR rate too
    conversion = Conversion(bare)
    kept = conversion.offers(
        [
            make_offer(currency="CNY", price_per_hour=D(30)),
            make_offer(instance_type="b", currency="CNY", price_per_hour=D(31)),
            make_offer(instance_type="c", price_per_hour=D(5)),
        ]
    )
    assert [o.instance_type for o in kept] == ["c"]
    assert conversion.skipped == 2
    line = conversion.report()
    assert line is not None and line.startswith("2 offers left out of the USD view")
    assert "CNY (2)" in line


def test_currency_codes_are_checked() -> None:
    assert parse_currency(" cny ") == "CNY"
    for bad in ("yuan", "C1Y", ""):
        try:
            parse_currency(bad)
        except ValueError as exc:
            assert "ISO 4217" in str(exc)
        else:  # pragma: no cover
            raise AssertionError(bad)


def test_a_rate_change_alone_adds_no_price_interval(engine: Engine) -> None:
    cny = make_offer(currency="CNY", price_per_hour=D(30))
    _ingest(engine, [cny], T0)
    # the yuan moves (any rate stored or not), the CNY price does not
    _ingest(engine, [cny], datetime(2024, 7, 5, tzinfo=UTC))
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(PricePoint)).scalar_one() == 1
    [stored] = reads.current_offers(engine)
    assert (stored.offer.price_per_hour, stored.offer.currency) == (D(30), "CNY")
    assert stored.offer.price_per_hour_usd is None  # nothing converted is stored
    # a price change does open one
    changed = datetime(2024, 7, 6, tzinfo=UTC)
    _ingest(engine, [make_offer(currency="CNY", price_per_hour=D(28))], changed)
    first, second = reads.price_history(engine, stored.series_id)
    assert (first.price, first.ended_at) == (D(30), changed)
    assert second.price == D(28) and second.ended_at is None


def test_the_sql_figure_follows_the_same_rule(engine: Engine) -> None:
    from sqlalchemy import bindparam, literal, select

    from tracker.fx import EcbRate
    from tracker.store import series as fx_store
    from tracker.store.types import UTCDateTime

    friday, monday = datetime(2020, 11, 27).date(), datetime(2020, 11, 30).date()
    with engine.begin() as conn:
        fx_store.record_rates(
            conn,
            [
                EcbRate("USD", friday, D("1.1922")),
                EcbRate("CNY", friday, D("7.8422")),
                EcbRate("USD", monday, D("1.198")),
                EcbRate("CNY", monday, D("7.8798")),
            ],
            source="fx",
        )
    saturday = bindparam("at", datetime(2020, 11, 28, 12, tzinfo=UTC), type_=UTCDateTime)
    manual = {"AED": D("0.27")}

    def usd(price: str, currency: str) -> Decimal | None:
        expr = fx_store.usd_sql(literal(price), literal(currency), saturday, manual)
        with engine.connect() as conn:
            value = conn.execute(select(expr)).scalar()
        return None if value is None else D(str(value)).quantize(D("1e-8"))

    # Friday's rates carry over Saturday: 30 × 1.1922 / 7.8422 = 4.56071000…
    assert usd("30", "CNY") == D("4.56071000")
    assert usd("2.5", "EUR") == D("2.98050000")  # 2.5 × 1.1922
    assert usd("5", "USD") == D("5.00000000")
    assert usd("20", "AED") == D("5.40000000")  # the manual rate, 20 × 0.27
    assert usd("20", "SAR") is None  # no rate: NULL, never 1.0
