"""Per-chip prices read as such: ``$/accelerator·h`` where a row is a TPU, Trainium or
Inferentia chip, ``$/GPU·h`` otherwise (issue 38), in the CLI's offers table and the
dashboard's Offers, Overview and GPU pages."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import ClassVar

import httpx
import pytest

from tests.conftest import make_offer
from tests.listed_collector import ListCollector
from tests.web.conftest import serve
from tracker.catalog import chip_unit
from tracker.cli.offers import offer_table
from tracker.collect import run_collector
from tracker.models import Offer
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine

AT = datetime(2026, 3, 1, tzinfo=UTC)


class Google(ListCollector):
    name: ClassVar[str] = "gcp"


def _offer(itype: str, gpu: str, count: int, price: str, vram: int) -> Offer:
    return make_offer(
        provider="gcp",
        instance_type=itype,
        region="us-central1",
        pricing="on_demand",
        gpu_model=gpu,
        gpu_count=Decimal(count),
        gpu_memory_gib=Decimal(vram),
        price_per_hour=Decimal(price),
    )


def test_chip_unit_names_accelerators_and_gpus() -> None:
    assert chip_unit(["H100-SXM", "L4"]) == "GPU"
    for chip in ("TPU-v6e", "Trainium1", "Inferentia2"):
        assert chip_unit(["H100-SXM", chip]) == "accelerator"
    assert chip_unit([]) == "GPU" and chip_unit(["not-in-the-catalog"]) == "GPU"


def test_the_cli_offers_table_header_follows_the_unit() -> None:
    heads = [c.header for c in offer_table("$", "accelerator")]
    assert "$/accelerator·h" in heads and "$/GPU·h" not in heads
    assert "€/GPU·h" in [c.header for c in offer_table("€")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('chips') / 'tracker.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    settings = Settings(database_url=url)
    offers = [
        _offer("ct6e-standard-4t", "TPU-v6e", 4, "10.80", 32),
        _offer("g2-standard-4", "L4", 1, "0.71", 24),
    ]
    assert run_collector(engine, Google(offers), settings, now=AT).ok
    server = serve(settings, engine)
    yield server.url
    server.stop()
    engine.dispose()


def test_dashboard_headers_say_accelerator_where_a_row_is_one(site: str) -> None:
    def page(path: str) -> str:
        r = httpx.get(site + path, timeout=30)
        assert r.status_code == 200, r.text
        return r.text

    assert '<th data-sort="number">$/accelerator·h</th>' in page("/offers")
    assert '<th data-sort="number">$/GPU·h</th>' in page("/offers?gpu=L4")
    assert "on-demand $/accelerator·h" in page("/")
    assert "on-demand $/GPU·h" in page("/?gpu=L4")
    tpu = page("/gpu?name=TPU-v6e")
    assert "<th>$/accelerator·h</th>" in tpu and "Cheapest per accelerator-hour" in tpu
    assert "<th>$/GPU·h</th>" in page("/gpu?name=L4")
