"""The dashboard's database reads on SQLite and Postgres: the same answers as the CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlalchemy import Engine

from tests.conftest import make_offer
from tests.web.store import Beta, fill
from tracker.collect import run_collector
from tracker.filters import OfferFilter
from tracker.fx import USD, EcbRate, Rates
from tracker.models import PricingModel
from tracker.settings import Settings
from tracker.store import series as fx_store
from tracker.store.reads import cheapest_per_gpu, offer_listing, without_rate
from tracker.views.currency import CurrencyView
from tracker.views.offers import SortKey, offer_rows

NOW = datetime(2026, 3, 10, tzinfo=UTC)
USD_ONLY = Rates()


@pytest.fixture
def filled(engine: Engine) -> Engine:
    fill(engine, Settings())
    return engine


def test_cheapest_per_gpu_picks_each_groups_lowest_per_gpu_price(filled: Engine) -> None:
    got = {
        (r.gpu_model, r.group): (
            r.provider,
            r.pricing,
            r.price_per_hour_usd / r.gpu_count,
            r.offers,
        )
        for r in cheapest_per_gpu(filled, USD_ONLY, NOW)
    }
    # H100-SXM: on-demand beta 3.60/1 < alpha 32.00/8 = 4.00; spot alpha 12.00/8 = 1.50 <
    # beta 2.00; reserved only alpha 24.00/8 = 3.00. Five H100 offers, two A100, one L4.
    assert got == {
        ("H100-SXM", "on_demand"): ("beta", "on_demand", Decimal("3.6"), 5),
        ("H100-SXM", "spot"): ("alpha", "spot", Decimal("1.5"), 5),
        ("H100-SXM", "reserved"): ("alpha", "reserved_1y", Decimal("3"), 5),
        ("A100-80GB", "on_demand"): ("beta", "on_demand", Decimal("2.2"), 2),
        ("L4", "on_demand"): ("beta", "on_demand", Decimal("0.8"), 1),
    }
    alpha = cheapest_per_gpu(
        filled, USD_ONLY, NOW, OfferFilter.of(provider=["alpha"], gpu=["H100"])
    )
    assert [(r.group, r.price_per_hour_usd / r.gpu_count) for r in alpha] == [
        ("on_demand", Decimal(4)),  # 32.00 / 8
        ("reserved", Decimal(3)),
        ("spot", Decimal("1.5")),
    ]


def _keys(rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(r["provider"], r["instance_type"], r["pricing"], r["zone"]) for r in rows]


FILTERS: list[tuple[dict[str, object], int]] = [
    ({}, 8),
    ({"min_vram": 30.0}, 7),  # the L4 has 24 GiB
    ({"min_gpus": 2.0}, 3),  # only alpha.8xh100: on-demand, spot, reserved
    ({"pricing": ["spot"]}, 2),
]


def test_offer_pages_are_the_cli_listing_cut_in_pages(filled: Engine) -> None:
    for sort in SortKey:
        for filters, expected_total in FILTERS:
            where = OfferFilter.of(**filters)  # type: ignore[arg-type]
            listing = offer_rows(filled, CurrencyView(USD, USD_ONLY), where, sort=sort)
            assert len(listing) == expected_total
            pages = []
            for offset in range(0, expected_total, 3):
                page = offer_listing(
                    filled,
                    USD_ONLY,
                    NOW,
                    where,
                    per_gpu=sort is SortKey.price_per_gpu,
                    offset=offset,
                    limit=3,
                )
                total, found = page.total, page.items
                assert total == expected_total
                pages += [
                    (s.offer.provider, s.offer.instance_type, s.offer.pricing, s.offer.zone)
                    for s in found
                ]
            assert pages == _keys(listing), (sort, filters)


class Gamma(Beta):
    name = "gamma"


def test_foreign_prices_rank_at_the_rate_in_force_and_no_rate_means_left_out(
    filled: Engine,
) -> None:
    """A CNY offer is ranked by its USD figure at the rate in force; an AED one (no ECB
    rate, no fx_rates) is left out of both reads and counted, never taken at 1.0."""
    offers = [
        make_offer(provider="gamma", instance_type="g.h100", region="cn-beijing",
                   gpu_model="H100-SXM", gpu_count=Decimal(1), gpu_memory_gib=Decimal(80),
                   price_per_hour=Decimal("20"), currency="CNY"),
        make_offer(provider="gamma", instance_type="g.l4", region="me-central-1",
                   gpu_model="L4", gpu_count=Decimal(1), gpu_memory_gib=Decimal(24),
                   price_per_hour=Decimal("0.5"), currency="AED"),
    ]  # fmt: skip
    summary = run_collector(filled, Gamma(offers), Settings(), now=datetime(2026, 3, 4, tzinfo=UTC))
    assert summary.ok, summary
    with filled.begin() as conn:
        fx_store.record_rates(
            conn,
            [
                EcbRate("USD", datetime(2026, 3, 2).date(), Decimal("1.2")),
                EcbRate("CNY", datetime(2026, 3, 2).date(), Decimal("8")),
                # a later step, not yet in force at NOW: must not be used
                EcbRate("CNY", datetime(2026, 3, 20).date(), Decimal("2")),
            ],
            source="fx",
        )
    rates = fx_store.load_rates(filled)
    # 20 CNY × 1.2 / 8 = 3.00 USD: cheaper than beta's 3.60 H100 on-demand (at the
    # 2026-03-20 step it would be 12.00 USD, so it wins only at the rate in force)
    winners = {(r.gpu_model, r.group): r for r in cheapest_per_gpu(filled, rates, NOW)}
    h100 = winners[("H100-SXM", "on_demand")]
    assert (h100.provider, h100.price_per_hour_usd) == ("gamma", Decimal("3"))
    # the AED L4 (0.5 "dollars" if taken at 1.0) would beat beta's 0.80 L4: left out
    assert winners[("L4", "on_demand")].provider == "beta"
    assert h100.offers == 6 and winners[("L4", "on_demand")].offers == 1  # 5 H100 + gamma
    page = offer_listing(
        filled, rates, NOW, OfferFilter.of(pricing=[PricingModel.ON_DEMAND]), limit=100
    )
    total, found = page.total, page.items
    # 5 on-demand offers in USD + gamma's CNY one; by USD/h: 0.80, 2.20, 2.50, 3.00 (CNY),
    # 3.60, 32.00; the AED L4 is not among them
    assert total == 6
    assert [s.offer.instance_type for s in found] == [
        "beta.l4",
        "beta.a100",
        "alpha.1xa100",
        "g.h100",
        "beta.h100",
        "alpha.8xh100",
    ]
    assert without_rate(filled, rates, NOW) == {"AED": 1}
    # a manual fx_rates entry fills the gap: 0.5 AED × 0.27 = 0.135 USD, now the cheapest L4
    manual = fx_store.load_rates(filled, {"AED": Decimal("0.27")})
    l4 = {(r.gpu_model, r.group): r for r in cheapest_per_gpu(filled, manual, NOW)}
    assert l4[("L4", "on_demand")].price_per_hour_usd == Decimal("0.135")
    assert without_rate(filled, manual, NOW) == {}
