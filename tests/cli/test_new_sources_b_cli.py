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


def test_collect_lium(cli: Run) -> None:
    body = (FIXTURES / "lium" / "nodes.json").read_bytes()
    with serve_recorded({("GET", "/api/public/v1/nodes"): body}) as url:
        proc = cli(
            "collect", "--provider", "lium", extra_env={"GPU_TRACKER_LIUM__ENDPOINT_URL": url}
        )
    assert proc.returncode == 0, proc.stderr
    # price_per_gpu_hour x count: 0.5 x 8 = 4; 3.99 x 1..5; 0.5 x 1 (spot tier); 1.23 x 8 = 9.84
    assert offers(cli, "lium") == {
        ("8x RTX 5090", "jp-13", "on_demand"): Decimal("4"),
        ("1x H200", "us-ms", "on_demand"): Decimal("3.99"),
        ("2x H200", "us-ms", "on_demand"): Decimal("7.98"),
        ("3x H200", "us-ms", "on_demand"): Decimal("11.97"),
        ("4x H200", "us-ms", "on_demand"): Decimal("15.96"),
        ("5x H200", "us-ms", "on_demand"): Decimal("19.95"),
        ("1x RTX 5090", "us-mn", "spot"): Decimal("0.5"),
        ("8x A100-SXM4-80GB", "us-va", "on_demand"): Decimal("9.84"),
    }


def test_collect_mithril(cli: Run) -> None:
    routes = {
        ("GET", "/v2/instance-types"): (FIXTURES / "mithril" / "instance_types.json").read_bytes(),
        ("GET", "/v2/spot/availability"): (
            FIXTURES / "mithril" / "spot_availability.json"
        ).read_bytes(),
    }
    with serve_recorded(routes) as url:
        env = {"GPU_TRACKER_MITHRIL__ENDPOINT_URL": url, "MITHRIL_API_KEY": "fkey_x"}
        proc = cli("collect", "--provider", "mithril", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    # last_instance_price "$5.00" / "$4.50" for the whole instance; auc_3 is skipped
    assert offers(cli, "mithril") == {
        ("h100.80gb.sxm", "us-east-1", "spot"): Decimal("5.00"),
        ("h100.80gb.sxm", "us-west-2", "spot"): Decimal("4.50"),
    }


def test_collect_latitude(cli: Run) -> None:
    body = (FIXTURES / "latitude" / "plans_gpu.json").read_bytes()
    with serve_recorded({("GET", "/plans"): body}) as url:
        env = {"GPU_TRACKER_LATITUDE__ENDPOINT_URL": url, "LATITUDESH_AUTH_TOKEN": "t"}
        proc = cli("collect", "--provider", "latitude", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    # pricing.USD.hour 3.37 in both regions; the CPU plan c3.small.x86 is no offer
    assert offers(cli, "latitude") == {
        ("g3-h100-small", "United States", "on_demand"): Decimal("3.37"),
        ("g3-h100-small", "Japan", "on_demand"): Decimal("3.37"),
    }
