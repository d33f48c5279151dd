"""Issue 9 item 4: an offer's columns are defined once, in ``tracker.models``.

Every writer and reader of offer columns (the ingest staging rows, the store reads, the
recommender's offer rows, the CLI's JSON row) derives from ``OFFER_COLUMNS``, and the
pure ranking imports nothing that touches a database.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from sqlalchemy import Engine

from tests.conftest import make_offer
from tracker.models import (
    OFFER_COLUMNS,
    OFFER_KEY_FIELDS,
    STORED_OFFER_COLUMNS,
    ColumnGroup,
    Offer,
    offer_values,
)
from tracker.recommend.stored import load_offer_table
from tracker.recommend.table import offer_to_row, row_to_offer
from tracker.settings import Settings
from tracker.store import migrate, reads
from tracker.store.ingest import INCOMING_COLUMNS, Ingest
from tracker.store.schema import HARDWARE_COLUMNS, IDENTITY_COLUMNS
from tracker.store.series import current_offer_rows
from tracker.views.offers import offer_row

NAMES = tuple(c.name for c in OFFER_COLUMNS)
T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
RECOMMEND = Path(__file__).resolve().parents[1] / "tracker" / "recommend"


def unusual_offer() -> Offer:
    """An offer with no column at its default, so a misplaced column cannot go unseen."""
    return make_offer(
        provider="acme",
        instance_type="x8.big",
        region="eu-west-9",
        zone="eu-west-9b",
        pricing="reserved_1y",
        payment_option="partial_upfront",
        offering_class="convertible",
        os="windows",
        gpu_model="Quantum Flux 9000",
        gpu_raw_name="QF-9000 (beta)",
        gpu_known=False,
        gpu_count=Decimal("0.5"),
        gpu_memory_gib=Decimal(48),
        vcpus=Decimal(12),
        memory_gib=Decimal(96),
        interconnect="pcie",
        availability="low",
        price_per_hour=Decimal("2.5"),
        currency="EUR",
        attributes={"upfront_usd": "1000", "note": "beta"},
    )


def store(engine: Engine, offers: list[Offer]) -> None:
    migrate.upgrade(engine)
    with engine.begin() as conn:
        ingest = Ingest(conn, source="acme", run_time=T0)
        for offer in offers:
            ingest.add(offer)
        ingest.finish(None)


def test_the_store_columns_and_the_staging_table_are_the_definition() -> None:
    assert IDENTITY_COLUMNS == OFFER_KEY_FIELDS
    series_groups = (ColumnGroup.IDENTITY, ColumnGroup.HARDWARE)
    assert (
        tuple(c.column for c in OFFER_COLUMNS if c.group in series_groups)
        == IDENTITY_COLUMNS + HARDWARE_COLUMNS
    )
    # the USD figure is derived when read (tracker.fx), never stored
    assert [c.name for c in OFFER_COLUMNS if c not in STORED_OFFER_COLUMNS] == [
        "price_per_hour_usd"
    ]
    # the run's staging table: a sequence number, every stored column, the observation
    # time, the identity's 64-bit hash (issue 17)
    assert (
        "seq",
        *(c.column for c in STORED_OFFER_COLUMNS),
        "observed_at",
        "identity_hash",
    ) == INCOMING_COLUMNS
    # the price column the store names for the interval, not for the hour
    assert {c.name: c.column for c in OFFER_COLUMNS if c.name != c.column} == {
        "price_per_hour": "price",
    }


def test_offer_values_follow_the_definition_and_key_order() -> None:
    offer = unusual_offer()
    values = dict(zip(NAMES, offer_values(offer), strict=True))
    assert values["pricing"] == "reserved_1y" and values["interconnect"] == "pcie"
    assert values["availability"] == "low"  # its own interval series in the store
    assert values["attributes"] == {"upfront_usd": "1000", "note": "beta"}
    assert tuple(values[name] for name in OFFER_KEY_FIELDS) == offer.key()
    assert row_to_offer(offer_to_row(offer)) == offer


def test_every_reader_returns_what_the_ingest_wrote(engine: Engine) -> None:
    offer = unusual_offer()
    store(engine, [offer])

    [stored] = reads.current_offers(engine)
    assert stored.offer == offer
    [row] = current_offer_rows(engine)
    assert len(row) == len(OFFER_COLUMNS)
    assert row_to_offer(row) == offer
    # the recommender's rows come in USD: 2.5 EUR x 1.05 (fx_rates.EUR) = 2.625
    table, conversion = load_offer_table(engine, Settings(fx_rates={"EUR": "1.05"}))
    usd_offer = replace(offer, price_per_hour_usd=Decimal("2.625"))
    assert table.offers[0] == usd_offer and conversion.skipped == 0
    # half of a 48 GiB GPU: 24 GiB usable, one GPU's worth of sharding
    assert table.vram_per_gpu[0] == 24.0 and table.whole_gpus[0] == 1
    assert table.price[0] == 2.625  # the USD figure, not the EUR one

    json_row = offer_row(replace(stored, offer=usd_offer))
    # every offer column under its own name, then the per-GPU price, the view currency's
    # figures, the times and the source that reported it, attributes last: the
    # documented JSON shape
    assert list(json_row) == [
        *NAMES[:-1],
        "price_per_gpu_hour_usd",
        "display_currency",
        "display_price_per_hour",
        "display_price_per_gpu_hour",
        # issue 42: the net price (no rule: the list one) and the rule's name
        "net_price_per_hour",
        "net_price_per_hour_usd",
        "net_price_per_gpu_hour_usd",
        "display_net_price_per_hour",
        "display_net_price_per_gpu_hour",
        "discount",
        "first_seen",
        "price_since",
        "last_seen",
        "source",
        "obtainability_7d",  # issue 42: None here, nothing reported availability
        "obtainability_30d",
        "median_back_hours",
        "attributes",
    ]
    assert json_row["price_per_gpu_hour_usd"] == Decimal("5.25")  # 2.625 / 0.5
    assert json_row["gpu_raw_name"] == "QF-9000 (beta)" and json_row["gpu_known"] is False
    assert json_row["source"] == "acme"  # who ingested it (Ingest(source="acme") above)


def test_importing_the_ranking_loads_no_database_code() -> None:
    code = (
        "import sys, tracker.recommend.rank, tracker.recommend.table; "
        "loaded = sorted(m for m in sys.modules "
        "if m.split('.')[0] == 'sqlalchemy' or m.startswith('tracker.store')); "
        "print(','.join(loaded))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.strip() == ""


def test_the_recommender_imports_no_sqlalchemy() -> None:
    """Issue 9 item 1: the recommender calls the store; only the store speaks SQL."""
    offenders = []
    for path in sorted(RECOMMEND.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "sqlalchemy"]
    assert offenders == []
