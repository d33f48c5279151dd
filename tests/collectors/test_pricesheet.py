"""Price sheets: CSV and JSON, FX conversion, unknown GPUs kept raw, file-level errors."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine

from collectors.base import CollectorError, NotConfigured
from collectors.pricesheet import PriceSheetCollector, read_sheet
from tracker.collect import run_collector
from tracker.settings import Settings
from tracker.store import reads


def test_not_configured_says_what_to_set() -> None:
    with pytest.raises(NotConfigured, match="GPU_TRACKER_PRICESHEET__PATH"):
        PriceSheetCollector.from_settings(Settings())


def test_json_sheet_with_fx_and_unknown_gpu(sqlite_engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "sheet.json"
    path.write_text(
        json.dumps(
            {
                "offers": [
                    {"provider": "scaleway", "instance_type": "H100-1-80G", "region": "fr-par-2",
                     "pricing": "on_demand", "gpu_model": "H100 PCIe", "gpu_count": 1,
                     "price_per_hour": 2.73, "currency": "EUR"},
                    {"provider": "acme", "instance_type": "x1", "region": "r1", "pricing": "spot",
                     "gpu_model": "Quantum Flux 9000", "gpu_count": 2, "price_per_hour": "1.5",
                     "currency": "USD", "interconnect": "pcie"},
                ]
            }
        )
    )  # fmt: skip
    settings = Settings(pricesheet={"path": path})
    summary = run_collector(sqlite_engine, PriceSheetCollector.from_settings(settings), settings)
    assert summary.status == "succeeded" and summary.stats.offers_seen == 2
    by_type = {s.offer.instance_type: s.offer for s in reads.current_offers(sqlite_engine)}
    h100 = by_type["H100-1-80G"]
    assert (h100.price_per_hour, h100.currency) == (Decimal("2.73"), "EUR")
    assert h100.price_per_hour_usd is None  # stored in EUR only; converted when read
    assert h100.gpu_model == "H100-PCIE" and h100.gpu_memory_gib == Decimal(80)  # from catalog
    weird = by_type["x1"]
    assert weird.gpu_known is False and weird.gpu_model == "Quantum Flux 9000"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("a.csv", "provider,instance_type\n", "missing column(s): region"),
        ("b.csv", "provider,instance_type,region,pricing,gpu_model,gpu_count,price_per_hour,"
                  "currency,colour\n", "unknown column(s): colour"),
        ("c.json", '{"offers": [1, 2', "invalid JSON"),
        ("d.json", '"text"', "expected a list of offers"),
    ],
)  # fmt: skip
def test_file_level_errors_stop_the_run(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(CollectorError, match=re.escape(message)):
        list(read_sheet(path))


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(CollectorError, match="cannot read price sheet"):
        list(read_sheet(tmp_path / "missing.csv"))


def test_a_sheet_states_the_fabric_between_nodes(sqlite_engine: Engine, tmp_path: Path) -> None:
    """``fabric`` and ``network_gbps`` are columns a sheet may give; a row that leaves
    them empty reads ``unknown`` with no bandwidth (never a guessed fast fabric), and a
    fabric outside the list is a skip naming the line and the field."""
    path = tmp_path / "sheet.csv"
    path.write_text(
        "provider,instance_type,region,pricing,gpu_model,gpu_count,price_per_hour,currency,"
        "fabric,network_gbps\n"
        "acme,h100x8-ib,r1,on_demand,H100 SXM,8,24,USD,infiniband,3200\n"
        "acme,h100x8,r1,on_demand,H100 SXM,8,20,USD,,\n"
        "acme,h100x8-bad,r1,on_demand,H100 SXM,8,20,USD,myrinet,10\n"
    )
    settings = Settings(pricesheet={"path": path})
    summary = run_collector(sqlite_engine, PriceSheetCollector.from_settings(settings), settings)
    assert summary.stats.offers_seen == 2
    assert summary.skip_reasons == {"invalid_row": 1}
    assert any("sheet.csv:4: fabric: 'myrinet' is not one of" in d for d in summary.skip_details)
    by_type = {s.offer.instance_type: s.offer for s in reads.current_offers(sqlite_engine)}
    assert (by_type["h100x8-ib"].fabric, by_type["h100x8-ib"].network_gbps) == (
        "infiniband",
        Decimal(3200),
    )
    assert (by_type["h100x8"].fabric, by_type["h100x8"].network_gbps) == ("unknown", None)
