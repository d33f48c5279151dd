"""The GPU-cloud collectors through the real ``gpu-tracker`` entry point and store.

A local HTTP server plays OCI and Vast.ai with the recorded payloads (reached
through the ``*_ENDPOINT_URL`` overrides); Lambda and RunPod run without keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from tests.cli.recorded_server import serve_recorded
from tests.conftest import Run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROUTES = {
    ("GET", "/pls/apex/cetools/api/v1/products/"): FIXTURES
    / "oci"
    / "products_usd_gpu_rows_capture.json",
    ("POST", "/api/v0/bundles/"): FIXTURES / "vastai" / "bundles_on_demand_page_derived.json",
}


@pytest.fixture
def server() -> Iterator[str]:
    with serve_recorded({route: path.read_bytes() for route, path in ROUTES.items()}) as url:
        yield url


def test_collect_oci_and_vast_into_the_store(cli: Run, server: str) -> None:
    env = {
        "GPU_TRACKER_OCI__ENDPOINT_URL": server,
        "GPU_TRACKER_VASTAI__ENDPOINT_URL": server,
        "GPU_TRACKER_VASTAI__INCLUDE_BIDS": "false",
    }
    proc = cli("collect", "--provider", "oci", "--provider", "vastai", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    listed = cli("offers", "--format", "json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    prices = {
        (r["provider"], r["instance_type"], r["pricing"]): Decimal(str(r["price_per_hour"]))
        for r in rows
    }
    assert prices[("oci", "BM.GPU.H100.8", "on_demand")] == Decimal("80")  # $10 x 8
    assert prices[("oci", "VM.GPU.A10.1", "spot")] == Decimal("1")  # $2 x 50 %
    assert prices[("vastai", "2x RTX 4090", "on_demand")] == Decimal("0.55")
    assert len([k for k in prices if k[0] == "oci"]) == 10 + 2  # every shape + VM A10 spot


def test_gpu_clouds_without_keys_are_skipped_with_one_line_each(cli: Run) -> None:
    proc = cli("collect", "--provider", "lambda", "--provider", "runpod")
    assert proc.returncode == 0, proc.stderr
    assert (
        "lambda: skipped: no API key: set GPU_TRACKER_LAMBDA__API_KEY (or LAMBDA_API_KEY)"
        in proc.stderr
    )
    assert (
        "runpod: skipped: no API key: set GPU_TRACKER_RUNPOD__API_KEY (or RUNPOD_API_KEY)"
        in proc.stderr
    )
