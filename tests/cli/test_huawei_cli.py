"""``gpu-tracker collect --provider huawei`` through the real entry point, SDK and store.

The IAM/ECS/BSS stand-in of tests/collectors/huawei_server.py answers the recorded
responses and checks every request's SDK-HMAC-SHA256 signature.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from decimal import Decimal

import pytest

from tests.collectors.huawei_server import HuaweiStandIn, serve
from tests.conftest import Run


@pytest.fixture
def standin() -> Iterator[HuaweiStandIn]:
    with serve(HuaweiStandIn(ak=f"AK{uuid.uuid4().hex[:18].upper()}", sk=uuid.uuid4().hex)) as s:
        yield s


def env_for(standin: HuaweiStandIn, sk: str) -> dict[str, str]:
    return {
        "HUAWEICLOUD_SDK_AK": standin.ak,
        "HUAWEICLOUD_SDK_SK": sk,
        "HUAWEICLOUD_SDK_IAM_ENDPOINT": standin.url,
        "GPU_TRACKER_HUAWEI__ECS_ENDPOINT_URL": standin.url,
        "GPU_TRACKER_HUAWEI__BSS_ENDPOINT_URL": standin.url,
        "GPU_TRACKER_HUAWEI__REGIONS": "cn-east-2",
    }


def test_collect_huawei_into_the_store(cli: Run, standin: HuaweiStandIn) -> None:
    # A refused key first: one line naming the variables, never the secret, nothing stored.
    wrong = uuid.uuid4().hex
    refused = cli("collect", "--provider", "huawei", extra_env=env_for(standin, wrong))
    assert refused.returncode != 0
    lines = [line for line in refused.stderr.splitlines() if "APIGW.0301" in line]
    assert len(lines) == 1 and "HUAWEICLOUD_SDK_SK" in lines[0]
    assert wrong not in refused.stderr + refused.stdout

    proc = cli("collect", "--provider", "huawei", extra_env=env_for(standin, standin.sk))
    assert proc.returncode == 0, proc.stderr
    # Stored in CNY without any rate; the USD view needs one (none stored: left out, said so).
    unrated = cli("offers", "--format", "json", "--limit", "100")
    assert json.loads(unrated.stdout) == []
    assert "10 offers left out of the USD view: no exchange rate for CNY (10)" in unrated.stderr
    listed = cli(
        "offers",
        "--format",
        "json",
        "--limit",
        "100",
        extra_env={"GPU_TRACKER_FX_RATES": '{"CNY": "0.14"}'},
    )
    assert listed.returncode == 0, listed.stderr
    rows = {(r["instance_type"], r["pricing"]): r for r in json.loads(listed.stdout)}
    assert len(rows) == 10  # 4 on demand + 3 x 1y + 3 x 3y (see test_huawei_collector)
    t4 = rows[("pi2.2xlarge.4", "on_demand")]
    assert (t4["provider"], t4["region"], t4["gpu_model"]) == ("huawei", "cn-east-2", "T4")
    assert Decimal(str(t4["price_per_hour"])) == Decimal("3.2")
    assert Decimal(str(t4["price_per_hour_usd"])) == Decimal("0.448")  # 3.20 CNY × 0.14, read time
    # 30274.56 CNY / 26280 h = 1.152 CNY/h
    assert Decimal(str(rows[("pi2.2xlarge.4", "reserved_3y")]["price_per_hour"])) == Decimal(
        "1.152"
    )
