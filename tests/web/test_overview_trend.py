"""The Overview's trend columns: 7- and 30-day change and the 30-day sparkline.

A hand-built history, collected through the real ingestion path, `d` days before
``now`` (the trend's days are now − 30, now − 29, …, now: index 0, 23 and 30 are
30 days, 7 days ago and now). On-demand $/GPU-hour:

  H100-SXM  alpha.8xh100 (8 GPUs)  32.00 → 4.00 from −40, 28.00 → 3.50 from −20,
                                   24.00 → 3.00 from −3
            beta.h100              3.80 from −40, never changes (spans the window)
            beta.h100b             3.30 from −40, delisted at −25 (beta's run without it)
  A100-80GB alpha.1xa100           2.00 from −40, 2.50 from −10
            alpha.1xa100 spot      1.00 from −40 (not on-demand: not in the default trend)
  L4        beta.l4                0.80 from −5 (no figure 7 or 30 days ago)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine

from tests.web.conftest import serve
from tests.web.store import Alpha, Beta, _offer
from tracker.collect import run_collector
from tracker.filters import OfferFilter
from tracker.fx import Rates
from tracker.models import Offer, PricingModel
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine
from tracker.store.reads import SeriesFilter, Steps, cheapest_at, cheapest_trend
from tracker.views.overview import overview

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
USD_ONLY = Rates()


def _alpha(h100: str, a100: str) -> list[Offer]:
    return [
        _offer("alpha", "alpha.8xh100", "us-east-1", "on_demand", "H100-SXM", 8, h100, 80),
        _offer("alpha", "alpha.1xa100", "us-west-2", "on_demand", "A100-80GB", 1, a100, 80),
        _offer("alpha", "alpha.1xa100", "us-west-2", "spot", "A100-80GB", 1, "1.00", 80),
    ]


def _beta(*, h100b: bool, l4: bool) -> list[Offer]:
    offers = [_offer("beta", "beta.h100", "eu-west-1", "on_demand", "H100-SXM", 1, "3.80", 80)]
    if h100b:
        offers.append(
            _offer("beta", "beta.h100b", "eu-west-1", "on_demand", "H100-SXM", 1, "3.30", 80)
        )
    if l4:
        offers.append(_offer("beta", "beta.l4", "eu-west-1", "on_demand", "L4", 1, "0.80", 24))
    return offers


RUNS = [  # (days before now, collector)
    (40, Alpha(_alpha("32.00", "2.00"))),
    (40, Beta(_beta(h100b=True, l4=False))),
    (25, Beta(_beta(h100b=False, l4=False))),
    (20, Alpha(_alpha("28.00", "2.00"))),
    (10, Alpha(_alpha("28.00", "2.50"))),
    (5, Beta(_beta(h100b=False, l4=True))),
    (3, Alpha(_alpha("24.00", "2.50"))),
]


def fill_history(engine: Engine, now: datetime) -> None:
    settings = Settings()
    for days, collector in RUNS:
        summary = run_collector(engine, collector, settings, now=now - timedelta(days=days))
        assert summary.ok, summary


def test_overview_trend_is_the_cheapest_on_demand_figure_per_day(engine: Engine) -> None:
    fill_history(engine, NOW)
    rows = {r.gpu_model: r for r in overview(engine, USD_ONLY, NOW).rows}
    h100, a100, l4 = rows["H100-SXM"], rows["A100-80GB"], rows["L4"]
    # H100 30 days ago: min(alpha 4.00, beta 3.80, beta.h100b 3.30) = 3.30; 7 days ago:
    # min(3.50, 3.80) = 3.50 (h100b delisted at −25); now min(3.00, 3.80) = 3.00.
    assert (h100.trend[0], h100.trend[23], h100.trend[30]) == (
        Decimal("3.3"),
        Decimal("3.5"),
        Decimal("3"),
    )
    # days −30..−26: 3.30; −25..−21: 3.80 (h100b gone, alpha still 4.00); −20..−4: 3.50
    assert (
        h100.trend
        == [Decimal("3.3")] * 5 + [Decimal("3.8")] * 5 + [Decimal("3.5")] * 17 + [Decimal("3")] * 4
    )
    # (3.00 / 3.50 − 1) × 100 = −14.29 → −14.3; (3.00 / 3.30 − 1) × 100 = −9.09 → −9.1
    assert (h100.change_7d_pct, h100.change_30d_pct) == (Decimal("-14.3"), Decimal("-9.1"))
    # A100: 2.00 until −10, then 2.50: 7 days ago already 2.50 → 0.0; (2.50 / 2.00 − 1) × 100
    # = 25.0. The 1.00 spot offer is not on-demand, so it is not in the trend.
    assert (a100.change_7d_pct, a100.change_30d_pct) == (Decimal("0.0"), Decimal("25.0"))
    assert a100.trend[:20] == [Decimal(2)] * 20 and a100.trend[20:] == [Decimal("2.5")] * 11
    # L4 listed 5 days ago: a figure from day 25 (now − 5 days) on, no change to show
    assert l4.trend == [None] * 25 + [Decimal("0.8")] * 6
    assert (l4.change_7d_pct, l4.change_30d_pct) == (None, None)


def test_trend_follows_the_filtered_pricing_and_provider(engine: Engine) -> None:
    fill_history(engine, NOW)
    spot = {
        r.gpu_model: r
        for r in overview(engine, USD_ONLY, NOW, OfferFilter.of(pricing=[PricingModel.SPOT])).rows
    }
    # only the A100 spot offer, 1.00 all along: no change
    assert list(spot) == ["A100-80GB"]
    assert spot["A100-80GB"].trend == [Decimal(1)] * 31
    assert spot["A100-80GB"].change_30d_pct == Decimal("0.0")
    beta = {
        r.gpu_model: r
        for r in overview(engine, USD_ONLY, NOW, OfferFilter.of(provider=["beta"])).rows
    }
    # beta alone: H100 3.30 30 days ago, 3.80 now: (3.80 / 3.30 − 1) × 100 = 15.15 → 15.2
    assert beta["H100-SXM"].change_30d_pct == Decimal("15.2")
    assert beta["H100-SXM"].change_7d_pct == Decimal("0.0")


def test_trend_matches_the_history_probe_reader(engine: Engine) -> None:
    """Same figures as cheapest_at (one probe per time and series), hourly too."""
    fill_history(engine, NOW)
    for times in (
        Steps(NOW - timedelta(days=30), timedelta(days=1), 31),
        Steps(NOW - timedelta(days=6), timedelta(hours=7), 21),
    ):
        where = SeriesFilter(pricing=[PricingModel.ON_DEMAND])
        expected: dict[str, list[Decimal | None]] = {}
        for c in cheapest_at(engine, times, where, per=("gpu_model",)):
            values = expected.setdefault(c.gpu_model, [None] * times.count)
            values[c.k] = (Decimal(str(c.price_usd)) / c.gpu_count).quantize(Decimal("1e-6"))
        assert cheapest_trend(engine, USD_ONLY, times, where) == expected


@pytest.fixture
def trend_site(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'trend.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    fill_history(engine, datetime.now(UTC))  # the page reads at the clock's now
    server = serve(Settings(database_url=url), engine)
    yield server.url
    server.stop()
    engine.dispose()


def test_overview_page_shows_the_changes_and_the_sparkline(trend_site: str) -> None:
    html = httpx.get(trend_site + "/", timeout=30).text
    rows = dict(re.findall(r'<tr data-gpu="([^"]+)">(.*?)</tr>', html, re.S))
    changes = {
        gpu: re.findall(r'<td class="num change" data-value="([^"]*)">([^<]*)</td>', row)
        for gpu, row in rows.items()
    }
    # the same figures as above (see the module docstring), shown without JavaScript
    # (tracker.format.percent, signed: a rise reads +25 %, no change 0 %)
    assert changes["H100-SXM"] == [("-14.3", "-14.3 %"), ("-9.1", "-9.1 %")]
    assert changes["A100-80GB"] == [("0.0", "0 %"), ("25.0", "+25 %")]
    assert changes["L4"] == [("", "–"), ("", "–")]
    spark = re.search(r'<svg class="spark"[^>]*data-values="([^"]*)"', rows["A100-80GB"])
    assert spark is not None
    # 20 days at 2.00, then 11 at 2.50 (html-escaped JSON)
    assert (
        spark.group(1) == "[" + ", ".join(["&quot;2&quot;"] * 20 + ["&quot;2.5&quot;"] * 11) + "]"
    )
