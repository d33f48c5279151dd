"""``gpu-tracker collect --provider tencent`` through the real entry point and store, against
the signing-checking local server of tests/collectors/tencent_server.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from tests.collectors.tencent_server import SECRET_ID, SECRET_KEY, TencentServer, fixture
from tests.conftest import Run, cli_runner

PAGES = {
    "POSTPAID_BY_HOUR": "zone_configs_postpaid_ap-guangzhou_derived.json",
    "SPOTPAID": "zone_configs_spotpaid_ap-guangzhou_derived.json",
    "PREPAID": "zone_configs_prepaid_ap-guangzhou_derived.json",
}


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Run:
    run = cli_runner(db_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


@pytest.fixture
def server() -> Iterator[tuple[TencentServer, str]]:
    srv = TencentServer()
    for charge, name in PAGES.items():
        srv.answer("DescribeZoneInstanceConfigInfos", "ap-guangzhou", charge, fixture(name))
    url = srv.start()
    try:
        yield srv, url
    finally:
        srv.stop()


# SQLite only: the store is engine-neutral and tested on both elsewhere; this is the collector.
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_tencent_into_the_store(cli: Run, server: tuple[TencentServer, str]) -> None:
    srv, url = server
    env = {
        "GPU_TRACKER_TENCENT__ENDPOINT_URL": url,
        "GPU_TRACKER_TENCENT__REGIONS": "ap-guangzhou",
        "TENCENTCLOUD_SECRET_ID": SECRET_ID,
        "TENCENTCLOUD_SECRET_KEY": SECRET_KEY,
    }
    proc = cli("collect", "--provider", "tencent", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert srv.bad_signatures == [] and len(srv.calls) == 3
    assert SECRET_KEY not in proc.stderr + proc.stdout
    # Stored in CNY without any rate; USD is computed when read, here from fx_rates.CNY.
    rated = {"GPU_TRACKER_FX_RATES": '{"CNY": "0.14"}'}
    listed = cli("offers", "--format", "json", "--limit", "100", extra_env=rated)
    assert listed.returncode == 0, listed.stderr
    rows = {
        (r["instance_type"], r["zone"], r["pricing"]): r
        for r in json.loads(listed.stdout)
        if r["provider"] == "tencent"
    }
    assert len(rows) == 8  # 4 pay-as-you-go + 1 spot + 3 prepaid (test_tencent_parse.py)
    spot = rows[("GN7.2XLARGE32", "ap-guangzhou-3", "spot")]
    assert (spot["currency"], Decimal(str(spot["price_per_hour"]))) == ("CNY", Decimal("1.736"))
    assert Decimal(str(spot["price_per_hour_usd"])) == Decimal("0.24304")  # 1.736 × 0.14
    three = rows[("GN7.2XLARGE32", "ap-guangzhou-3", "reserved_3y")]
    assert Decimal(str(three["price_per_hour"])) == Decimal("2.8150684932")  # 73980 / 26280
