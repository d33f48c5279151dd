"""The dashboard's database reads on SQLite and Postgres: the same answers as the CLI."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import Engine

from tests.web.store import fill
from tracker.catalog import select_gpus
from tracker.cli.offers import SortKey, offer_rows
from tracker.settings import Settings
from tracker.store.dashboard import cheapest_per_gpu, offer_page


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
        for r in cheapest_per_gpu(filled)
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
    alpha = cheapest_per_gpu(filled, provider=["alpha"], gpu=select_gpus(["H100"]))
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
            listing = offer_rows(filled, sort=sort, **filters)  # type: ignore[arg-type]
            assert len(listing) == expected_total
            pages = []
            for offset in range(0, expected_total, 3):
                total, found = offer_page(
                    filled,
                    per_gpu=sort is SortKey.price_per_gpu,
                    offset=offset,
                    limit=3,
                    **filters,  # type: ignore[arg-type]
                )
                assert total == expected_total
                pages += [
                    (s.offer.provider, s.offer.instance_type, s.offer.pricing, s.offer.zone)
                    for s in found
                ]
            assert pages == _keys(listing), (sort, filters)
