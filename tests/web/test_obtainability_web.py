"""Obtainability over HTTP and on the GPU page (issue 42), from one hand-worked history.

``acme``'s H100 offer ``h100.x`` (us-east-1) is reported daily for 8 days, ending two
hours ago: available on days 0-1, sold out on days 2-5, available on days 6-7. Known 7
days, rentable 3: 3/7 = 0.4286 over the 30-day window; back once, after 96 hours.
``h100.w`` in eu-west-1 is sold out at every report: 0 of 7 days, never back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.conftest import make_offer
from tests.store.test_history import run
from tests.web.conftest import serve
from tracker.models import Availability
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine

A, U = Availability.AVAILABLE, Availability.UNAVAILABLE
X_STATES = [A, A, U, U, U, U, A, A]


def h100(instance_type: str, region: str, availability: Availability) -> Any:
    return make_offer(
        provider="acme",
        instance_type=instance_type,
        region=region,
        gpu_model="H100-SXM",
        gpu_count=Decimal(1),
        gpu_memory_gib=Decimal(80),
        price_per_hour=Decimal("2.00"),
        availability=availability,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('obtain') / 'tracker.db'}"
    engine: Engine = make_engine(url)
    migrate.upgrade(engine)
    t0 = datetime.now(UTC) - timedelta(days=7, hours=2)
    for day, state in enumerate(X_STATES):
        run(engine, [h100("h100.x", "us-east-1", state), h100("h100.w", "eu-west-1", U)],
            t0 + timedelta(days=day))  # fmt: skip
    server = serve(Settings(database_url=url), engine)
    try:
        yield server.url
    finally:
        server.stop()
        engine.dispose()


def get(site: str, path: str, **params: str) -> Any:
    r = httpx.get(f"{site}{path}", params=params, timeout=30)
    assert r.status_code == 200, r.text
    return r.json() if path.startswith("/api") else r.text


def test_offers_and_groups_over_the_api(site: str) -> None:
    offers = {r["instance_type"]: r for r in get(site, "/api/v1/offers")}
    assert offers["h100.x"]["obtainability_30d"] == 0.4286
    assert offers["h100.x"]["median_back_hours"] == 96.0
    assert (offers["h100.w"]["obtainability_30d"], offers["h100.w"]["median_back_hours"]) == (
        0.0,
        None,
    )
    groups = get(site, "/api/v1/obtainability", gpu="H100")
    assert [(g["region"], g["offers"], g["obtainability_30d"], g["came_back"]) for g in groups] == [
        ("eu-west-1", 1, 0.0, 0),
        ("us-east-1", 1, 0.4286, 1),
    ]
    assert get(site, "/api/v1/obtainability", gpu="A10G") == []
    # compare pools the GPU at the provider: (3 + 0) / (7 + 7) = 3/14 = 0.2143
    [row] = get(site, "/api/v1/compare", gpu="H100")
    assert (row["obtainability_30d"], row["median_back_hours"]) == (0.2143, 96.0)


def test_the_gpu_page_shows_how_often_it_could_be_rented(site: str) -> None:
    html = get(site, "/gpu", name="H100-SXM")
    assert "How often it could be rented" in html
    assert '<td>us-east-1</td><td class="num">1</td>' in html and "43%" in html
    assert "96.0 h" in html
    assert "How often it could be rented" not in get(site, "/gpu", name="A10G")
    compare = get(site, "/compare", gpu="H100")
    assert "rentable 30 days" in compare and 'data-value="0.2143">21%</td>' in compare
