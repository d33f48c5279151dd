"""AWS without credentials: the public bulk offer files (tests/fixtures/aws/SOURCES.md, "Bulk")."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import collectors.aws_bulk_stream as stream_mod
from collectors.aws import NEEDS_CREDENTIALS, AwsCollector
from collectors.aws_bulk import wanted_product
from collectors.aws_bulk_hardware import bulk_hardware
from collectors.aws_bulk_stream import OfferFileError, extract_offer_file
from collectors.base import CollectorError, RunContext, SkipItem
from tests.conftest import Run, cli_runner
from tracker import registry
from tracker.catalog import resolve_gpu
from tracker.models import Fabric
from tracker.settings import Settings

FIXTURES = Path(__file__).parent.parent / "fixtures" / "aws"
DERIVED = FIXTURES / "bulk_offer_file_us_east_2_derived.json"
REAL = FIXTURES / "bulk_offer_file_us_east_2_opencost.json"
SKU = "DRVP38XLARGELNX1"
REGION_FILE = "/offers/v1.0/aws/AmazonEC2/20230322145651/us-east-2/index.json"


def extract(path: Path) -> Any:
    return extract_offer_file(io.StringIO(path.read_text()), wanted_product, path.name)


def test_only_linux_shared_gpu_products_are_kept_with_their_terms() -> None:
    got = extract(DERIVED)
    assert (got.version, got.publication_date) == ("20230322145651", "2023-03-22T14:56:51Z")
    # m5.large (no GPU), p3.8xlarge Windows BYOL and the gp3 volume are left out.
    assert list(got.items) == [SKU]
    terms = got.items[SKU]["terms"]
    assert len(terms["OnDemand"]) == 1 and len(terms["Reserved"]) == 12


def test_the_real_capture_has_no_linux_gpu_product() -> None:
    assert extract(REAL).items == {}


def test_values_split_across_read_chunks_decode_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = extract(DERIVED)
    monkeypatch.setattr(stream_mod, "CHUNK_CHARS", 7)  # every value straddles reads
    assert extract(DERIVED).items == whole.items


def test_terms_before_products_is_a_clear_error() -> None:
    body = '{"terms": {"OnDemand": {}}, "products": {}}'
    with pytest.raises(OfferFileError, match=r"x\.json: 'terms' comes before 'products'"):
        extract_offer_file(io.StringIO(body), wanted_product, "x.json")


def test_truncated_file_is_a_clear_error() -> None:
    text = DERIVED.read_text()[:5000]
    with pytest.raises(OfferFileError, match=r"cut\.json: bad JSON"):
        extract_offer_file(io.StringIO(text), wanted_product, "cut.json")


def test_hardware_from_the_products_own_attributes() -> None:
    attrs = extract(DERIVED).items[SKU]["product"]["attributes"]
    hw = bulk_hardware(attrs, True, resolve_gpu)
    assert hw is not None
    # gpu "4", vcpu "32", memory "244 GiB"; the p3 family carries V100 16384 MiB = 16 GiB.
    assert (hw.gpu_raw_name, hw.gpu_count, hw.vcpus) == ("V100", Decimal(4), Decimal(32))
    assert (hw.memory_gib, hw.gpu_memory_gib) == (Decimal("244.000"), Decimal("16.000"))


def test_a_family_the_table_does_not_know_is_a_counted_skip() -> None:
    attrs = {"instanceType": "g4ad.xlarge", "gpu": "1", "instanceFamily": "GPU instance"}
    with pytest.raises(SkipItem) as exc:
        bulk_hardware(attrs, True, resolve_gpu)
    assert exc.value.reason == "unknown_gpu"


def test_providers_says_which_parts_run_without_credentials() -> None:
    status = {s.name: s for s in registry.status(Settings())}
    assert status["aws"].configured is True
    assert "on-demand and reserved from the public bulk offer files" in status["aws"].reason
    assert "spot" in status["aws"].reason and "need credentials" in status["aws"].reason
    assert AwsCollector.from_settings(Settings()).bulk is not None


# ------------------------------------------------------------- end to end, local server


class BulkServer:
    """Serves index.json, region_index.json and one regional file on 127.0.0.1."""

    def __init__(self) -> None:
        self.files = {
            "/offers/v1.0/aws/index.json": (FIXTURES / "bulk_index_cloudmesh.json").read_bytes(),
            "/offers/v1.0/aws/AmazonEC2/current/region_index.json": (
                FIXTURES / "bulk_region_index_us_east_2_derived.json"
            ).read_bytes(),
            REGION_FILE: DERIVED.read_bytes(),
        }
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                body = outer.files.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[tuple[BulkServer, str]]:
    srv = BulkServer()
    with srv as url:
        yield srv, url


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Run:
    run = cli_runner(db_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_collect_without_credentials_stores_bulk_prices(
    cli: Run, server: tuple[BulkServer, str]
) -> None:
    srv, url = server
    env = {"GPU_TRACKER_AWS__BULK_URL": url}
    proc = cli("collect", "--provider", "aws", "--no-hooks", extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert srv.requests.count(REGION_FILE) == 1
    listed = cli("offers", "--format", "json", "--limit", "100", extra_env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {
        (r["pricing"], r["payment_option"], r["offering_class"]): Decimal(str(r["price_per_hour"]))
        for r in json.loads(listed.stdout)
        if r["provider"] == "aws"
    }
    assert len(rows) == 13  # 1 OnDemand + 12 Reserved terms
    # On-demand: the term's one Hrs dimension, 12.2400000000 USD.
    assert rows[("on_demand", "", "")] == Decimal("12.24")
    # 1yr standard No Upfront: 7.65 / h, no fee.
    assert rows[("reserved_1y", "no_upfront", "standard")] == Decimal("7.65")
    # 1yr standard All Upfront: 62985 / 8760 h + 0 = 7.19006849315… -> 10 decimals.
    assert rows[("reserved_1y", "all_upfront", "standard")] == Decimal("7.1900684932")
    # 1yr standard Partial Upfront: 3.6975 + 32130 / 8760 = 3.6975 + 3.66780821917…
    assert rows[("reserved_1y", "partial_upfront", "standard")] == Decimal("7.3653082192")
    # 3yr convertible All Upfront: 148027.5 / 26280 h = 5.63270547945…
    assert rows[("reserved_3y", "all_upfront", "convertible")] == Decimal("5.6327054795")
    # 3yr standard Partial Upfront: 2.4225 + 64387.5 / 26280 = 2.4225 + 2.45005707762…
    assert rows[("reserved_3y", "partial_upfront", "standard")] == Decimal("4.8725570776")

    # Same version in region_index.json: the regional file is not downloaded again,
    # and its offers are still there (not delisted).
    again = cli("collect", "--provider", "aws", "--no-hooks", extra_env=env)
    assert again.returncode == 0, again.stderr
    assert srv.requests.count(REGION_FILE) == 1
    assert srv.requests.count("/offers/v1.0/aws/AmazonEC2/current/region_index.json") == 2
    relisted = cli("offers", "--format", "json", "--limit", "100", extra_env=env)
    assert sum(r["provider"] == "aws" for r in json.loads(relisted.stdout)) == 13
    runs = json.loads(cli("runs", "-f", "json", extra_env=env).stdout)
    assert runs[0]["status"] == "succeeded", runs[0]


def test_spot_savings_plans_and_capacity_blocks_are_stated_skips(
    server: tuple[BulkServer, str],
) -> None:
    _, url = server
    settings = Settings(aws={"bulk_url": url})
    collector = AwsCollector.from_settings(settings)
    ctx = RunContext(settings)
    offers = list(collector.collect(ctx))
    assert len(offers) == 13
    assert ctx.skips[NEEDS_CREDENTIALS] == 3  # spot, savings plans, capacity blocks
    assert f"{NEEDS_CREDENTIALS}: aws: spot needs credentials" in ctx.details
    assert f"{NEEDS_CREDENTIALS}: aws: capacity blocks need credentials" in ctx.details
    assert list(collector.collect_service_prices(ctx)) == []
    assert ctx.skips[NEEDS_CREDENTIALS] == 4


def test_a_new_version_is_downloaded_again(server: tuple[BulkServer, str]) -> None:
    srv, url = server
    settings = Settings(aws={"bulk_url": url})
    assert len(list(AwsCollector.from_settings(settings).collect(RunContext(settings)))) == 13
    index_path = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
    newer = REGION_FILE.replace("20230322145651", "20230401000000")
    srv.files[index_path] = srv.files[index_path].replace(REGION_FILE.encode(), newer.encode())
    srv.files[newer] = srv.files[REGION_FILE]
    assert len(list(AwsCollector.from_settings(settings).collect(RunContext(settings)))) == 13
    assert (srv.requests.count(REGION_FILE), srv.requests.count(newer)) == (1, 1)


def test_an_unreadable_regional_file_fails_the_run_when_it_is_the_only_one(
    server: tuple[BulkServer, str],
) -> None:
    srv, url = server
    del srv.files[REGION_FILE]  # 404
    settings = Settings(aws={"bulk_url": url})
    ctx = RunContext(settings)
    with pytest.raises(CollectorError, match=r"aws: every region failed \(1\); first: us-east-2"):
        list(AwsCollector.from_settings(settings).collect(ctx))
    assert "404" in ctx.partial["us-east-2"]


def test_a_malformed_value_does_not_buffer_the_rest_of_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stream_mod, "CHUNK_CHARS", 64)
    monkeypatch.setattr(stream_mod, "MAX_VALUE_CHARS", 256)
    text = '{"products": {"A": {"sku": "A",, "x": 1}' + " " * 100_000 + "}}"
    reader_input = io.StringIO(text)
    with pytest.raises(OfferFileError, match=r"bad\.json: bad JSON"):
        extract_offer_file(reader_input, wanted_product, "bad.json")
    assert reader_input.tell() < 1000  # stopped reading soon after the value went bad


def test_the_price_list_gives_bandwidth_but_never_efa() -> None:
    attrs = extract(DERIVED).items[SKU]["product"]["attributes"]
    hw = bulk_hardware(attrs, True, resolve_gpu)
    assert hw is not None
    # networkPerformance "10 Gigabit" is a figure; the price list has no EfaSupported,
    # so the fabric is not known (p3.8xlarge has no EFA, but the file does not say so).
    assert (hw.fabric, hw.network_gbps) == (Fabric.UNKNOWN, Decimal(10))
