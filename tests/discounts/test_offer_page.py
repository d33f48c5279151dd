"""The dashboard's Offers page orders by the net price in SQL, the same order as the
``offers`` listing computes in Python (SQLite GLOB, Postgres LIKE), per hour and per
GPU-hour, with a percentage, a fixed price and a glob; a ``[...]`` glob (no SQL form)
falls back to the Python order.

testcloud offers (1 GPU unless said), on-demand unless said, us-east-1 unless said:
    p5.48xlarge 8 GPUs 55.04   → 15 % off p5.*: 55.04 × 0.85 = 46.784 (5.848 per GPU)
    p5_x        1 GPU  50.00   → not p5.* under GLOB/LIKE ("_" is no wildcard): 50.00
    g5.xlarge          1.006   → fixed 0.50 for g5.* in us-*: 0.50
    g5.xlarge eu-west-1 1.20   → eu is not us-*: 1.20
    a10.small          0.80    → no rule: 0.80
    h100.spot spot     5.00    → no rule: 5.00
Per hour, list: a10 0.80, g5 1.006, g5 eu 1.20, spot 5.00, p5_x 50.00, p5 55.04;
net: g5 0.50, a10 0.80, g5 eu 1.20, spot 5.00, p5 46.784, p5_x 50.00 (two pairs swap).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import Engine

from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.discounts import Discounts, parse_discounts
from tracker.fx import Rates
from tracker.views.currency import CurrencyView
from tracker.views.offers import SortKey, offer_page, offer_rows

D = Decimal
NOW = datetime.now(UTC)
RULES = [
    {"name": "edp", "provider": "testcloud", "instance_types": ["p5.*"], "percent": 15},
    {"name": "g5-deal", "provider": "testcloud", "instance_types": ["g5.*"],
     "regions": ["us-*"], "price_per_hour": "0.50"},
]  # fmt: skip


def _offers() -> list[Any]:
    one = {"gpu_count": D(1), "gpu_memory_gib": D(24), "interconnect": "pcie"}
    return [
        make_offer(instance_type="p5.48xlarge", price_per_hour=D("55.04"), gpu_count=D(8)),
        make_offer(instance_type="p5_x", price_per_hour=D("50.00"), **one),
        make_offer(instance_type="a10.small", price_per_hour=D("0.80"), **one),
        make_offer(instance_type="g5.xlarge", price_per_hour=D("1.006"), **one),
        make_offer(instance_type="g5.xlarge", region="eu-west-1", price_per_hour=D("1.20"), **one),
        make_offer(instance_type="h100.spot", pricing="spot", price_per_hour=D("5.00"), **one),
    ]


def _view(rules: list[dict[str, Any]]) -> CurrencyView:
    return CurrencyView("USD", Rates(), NOW, Discounts(parse_discounts(rules), Rates()))


def _order(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["instance_type"], r["region"]) for r in rows]


@pytest.mark.parametrize("sort", [SortKey.price, SortKey.price_per_gpu])
def test_the_sql_page_order_is_the_listing_order(engine: Engine, sort: SortKey) -> None:
    collect(engine, _offers(), NOW)
    page = offer_page(engine, _view(RULES), NOW, sort=sort, limit=10)
    listed = offer_rows(engine, _view(RULES), sort=sort)
    assert _order(page.items) == _order(listed) and page.total == 6
    net = {(r["instance_type"], r["region"]): r["net_price_per_hour_usd"] for r in page.items}
    assert net[("p5.48xlarge", "us-east-1")] == D("46.784")
    assert net[("p5_x", "us-east-1")] == D("50")  # "_" is no glob wildcard
    assert net[("g5.xlarge", "us-east-1")] == D("0.5")
    assert net[("g5.xlarge", "eu-west-1")] == D("1.2")
    if sort is SortKey.price:
        assert [i for i, _ in _order(page.items)] == [
            "g5.xlarge", "a10.small", "g5.xlarge", "h100.spot", "p5.48xlarge", "p5_x"
        ]  # fmt: skip
    else:  # per GPU: g5 0.50, a10 0.80, g5 eu 1.20, spot 5.00, p5 5.848, p5_x 50.00
        assert _order(page.items)[:2] == [("g5.xlarge", "us-east-1"), ("a10.small", "us-east-1")]


def test_a_bracket_glob_falls_back_to_the_python_order(engine: Engine) -> None:
    collect(engine, _offers(), NOW)
    rules = [{"name": "sets", "provider": "testcloud", "instance_types": ["p[5]*"], "percent": 90}]
    # 90 % off p[5]*: p5_x 50.00 × 0.1 = 5.00, p5.48xlarge 55.04 × 0.1 = 5.504; then
    # a10 0.80, g5 1.006, g5 eu 1.20, spot 5.00 (tied with p5_x: h100.spot < p5_x by name)
    page = offer_page(engine, _view(rules), NOW, limit=6)
    assert [i for i, _ in _order(page.items)] == [
        "a10.small", "g5.xlarge", "g5.xlarge", "h100.spot", "p5_x", "p5.48xlarge"
    ]  # fmt: skip
    assert page.total == 6
