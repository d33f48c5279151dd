"""An offer's fabric where a person or a program reads offers: table, JSON, DataFrame."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import tracker.api
from tests.conftest import Run

SHEET = """provider,instance_type,region,zone,pricing,gpu_model,gpu_count,price_per_hour,currency,fabric,network_gbps
aws,p5.48xlarge,us-east-1,,on_demand,H100 SXM,8,55.04,USD,efa,3200
pcie,h100-pcie-1x,us-east-1,,on_demand,H100 PCIe,1,2.00,USD,,
"""


def test_offers_show_the_stated_fabric_and_blank_for_unknown(
    cli: Run, tmp_path: Path, db_url: str
) -> None:
    sheet = tmp_path / "offers.csv"
    sheet.write_text(SHEET)
    assert cli("import", str(sheet)).returncode == 0
    table = cli("offers", extra_env={"COLUMNS": "200"}).stdout
    assert "fabric Gb/s" in table
    p5 = next(line for line in table.splitlines() if "p5.48xlarge" in line)
    pcie = next(line for line in table.splitlines() if "h100-pcie-1x" in line)
    assert "efa 3200" in p5
    assert "unknown" not in pcie  # not stated: a blank cell, never a name
    rows = {r["instance_type"]: r for r in json.loads(cli("offers", "--format", "json").stdout)}
    assert (rows["p5.48xlarge"]["fabric"], rows["p5.48xlarge"]["network_gbps"]) == ("efa", "3200")
    assert (rows["h100-pcie-1x"]["fabric"], rows["h100-pcie-1x"]["network_gbps"]) == (
        "unknown",
        None,
    )
    with tracker.api.connect(db_url) as t:
        frame = t.offers().set_index("instance_type")
    assert frame.loc["p5.48xlarge", "fabric"] == "efa"
    assert frame.loc["p5.48xlarge", "network_gbps"] == Decimal(3200)


def test_the_dashboard_shows_the_fabric(cli: Run, tmp_path: Path, db_url: str) -> None:
    import httpx

    from tests.web.conftest import serve
    from tracker.settings import Settings
    from tracker.store.engine import make_engine

    sheet = tmp_path / "offers.csv"
    sheet.write_text(SHEET)
    assert cli("import", str(sheet)).returncode == 0
    engine = make_engine(db_url)
    server = serve(Settings(database_url=db_url), engine)
    try:
        offers = httpx.get(f"{server.url}/offers", timeout=30).text
        assert '<th data-sort="text">fabric</th>' in offers and "<td>efa</td>" in offers
        gpu = httpx.get(f"{server.url}/gpu", params={"name": "H100-SXM"}, timeout=30).text
        # the cheapest on-demand H100-SXM is the p5 (the PCIe box is another model)
        assert "efa 3,200 Gb/s between instances" in gpu
        page = httpx.get(
            f"{server.url}/offer",
            params={"provider": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"},
            timeout=30,
        ).text
        assert "between instances efa, 3,200 Gb/s" in page
    finally:
        server.stop()
        engine.dispose()
