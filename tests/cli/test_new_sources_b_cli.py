"""``gpu-tracker collect --provider P`` for the sources of issue 43 (novita, lium, …) through
the real entry point and store, against recorded payloads on 127.0.0.1 via the endpoint
override (the documented path kept)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from tests.cli.recorded_server import serve_recorded
from tests.cli.test_small_clouds_cli import offers
from tests.conftest import Run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_collect_novita(cli: Run) -> None:
    body = (FIXTURES / "novita" / "products.json").read_bytes()
    with serve_recorded({("GET", "/gpu-instance/openapi/v1/products"): body}) as url:
        env = {"GPU_TRACKER_NOVITA__ENDPOINT_URL": url, "NOVITA_API_KEY": "k"}
        proc = cli("collect", "--provider", "novita", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    # price / 100000 per GPU-hour: 35000 -> 0.35, spot 17500 -> 0.175, 160000 -> 1.6, 67000 -> 0.67
    assert offers(cli, "novita") == {
        ("4090.16c62g", "US-CA-06", "on_demand"): Decimal("0.35"),
        ("4090.16c62g", "EU-GB-01", "on_demand"): Decimal("0.35"),
        ("4090.16c62g", "US-CA-06", "spot"): Decimal("0.175"),
        ("4090.16c62g", "EU-GB-01", "spot"): Decimal("0.175"),
        ("A100-80GB.14c240g", "US-CA-06", "on_demand"): Decimal("1.6"),
        ("26", "US-01", "on_demand"): Decimal("0.67"),
    }
