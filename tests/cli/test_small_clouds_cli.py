"""The smaller GPU clouds through the real ``gpu-tracker collect`` and the store.

A local HTTP server plays each provider with its recorded payloads, reached through
the ``GPU_TRACKER_<P>__ENDPOINT_URL`` override (the documented path kept).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from tests.cli.recorded_server import serve_recorded
from tests.conftest import Run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def offers(cli: Run, provider: str) -> dict[tuple[str, str, str], Decimal]:
    listed = cli("offers", "--provider", provider, "--format", "json", "--limit", "200")
    assert listed.returncode == 0, listed.stderr
    return {
        (r["instance_type"], r["region"], r["pricing"]): Decimal(str(r["price_per_hour"]))
        for r in json.loads(listed.stdout)
    }


def test_collect_digitalocean(cli: Run) -> None:
    routes = {("GET", "/v2/sizes"): (FIXTURES / "digitalocean" / "sizes_page2.json").read_bytes()}
    with serve_recorded(routes) as url:
        env = {"GPU_TRACKER_DIGITALOCEAN__ENDPOINT_URL": url, "DIGITALOCEAN_TOKEN": "t"}
        proc = cli("collect", "--provider", "digitalocean", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert offers(cli, "digitalocean") == {
        ("gpu-h100x8-640gb", "nyc1", "on_demand"): Decimal("23.92"),
        ("gpu-mi300x8-1536gb", "nyc1", "on_demand"): Decimal("15.92"),
    }
