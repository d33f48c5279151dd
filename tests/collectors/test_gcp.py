"""The GCP collector end to end: google-cloud-billing's real client (REST transport)
against an in-process HTTP server serving recorded/derived catalog pages."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import google.auth.compute_engine._metadata as gce_metadata
import pytest
from google.cloud import billing_v1

from collectors.base import (
    ALL_PRICING,
    WITHOUT_SAVINGS_PLANS,
    CollectorError,
    MissingCredentials,
    NotConfigured,
    RunContext,
)
from collectors.gcp import GcpCollector, compose_offers, parse_skus
from collectors.gcp_machines import MACHINE_SHAPES
from tracker.catalog import resolve_gpu
from tracker.models import Offer, PricingModel
from tracker.settings import Settings

from .conftest import run_context

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gcp"
PAGE_1 = (FIXTURES / "catalog_page_1_opencost.json").read_bytes()
PAGE_2 = (FIXTURES / "catalog_page_2_derived.json").read_bytes()
PAGE_3 = (FIXTURES / "catalog_page_3_derived.json").read_bytes()
TOKEN_2 = json.loads(PAGE_1)["nextPageToken"]
TOKEN_3 = json.loads(PAGE_2)["nextPageToken"]
SKUS_PATH = "/v1/services/6F81-5844-456A/skus"
API_KEY = "test-key-not-secret"


def error_body(code: int, status: str, message: str) -> bytes:
    """The real error envelope (opencost capture) with its values changed."""
    body = json.loads((FIXTURES / "error_api_key_invalid_opencost.json").read_text())
    body["error"].update(code=code, status=status, message=message)
    return json.dumps(body).encode()


class CatalogServer:
    """Serves the catalog pages by pageToken; ``failures`` are answered first, in order."""

    def __init__(self) -> None:
        self.pages = {"": PAGE_1, TOKEN_2: PAGE_2, TOKEN_3: PAGE_3}
        self.failures: dict[str, list[tuple[int, bytes]]] = {}
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                server.requests.append(
                    {
                        "path": url.path,
                        "query": query,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                    }
                )
                if url.path != SKUS_PATH:
                    self._send(404, error_body(404, "NOT_FOUND", "no such path"))
                    return
                token = query.get("pageToken", "")
                queued = server.failures.get(token)
                if queued:
                    self._send(*queued.pop(0))
                    return
                self._send(200, server.pages[token])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def sku_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("path") == SKUS_PATH]


@contextmanager
def serving(pages: dict[str, bytes] | None = None) -> Iterator[CatalogServer]:
    """A started catalog server (serving ``pages`` by pageToken when given)."""
    s = CatalogServer()
    if pages is not None:
        s.pages = pages
    s.thread.start()
    try:
        yield s
    finally:
        s.httpd.shutdown()
        s.httpd.server_close()


@pytest.fixture
def server() -> Iterator[CatalogServer]:
    with serving() as s:
        yield s


@pytest.fixture(autouse=True)
def _no_google_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ADC must never find the developer's gcloud login nor probe the GCE metadata server."""
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setattr(gce_metadata, "_NO_GCE_CHECK", True)
    for key in ("GPU_TRACKER_GCP__API_KEY", "GPU_TRACKER_GCP__ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)


def make_settings(server: CatalogServer, **gcp: Any) -> Settings:
    section = {
        "api_key": API_KEY,
        "endpoint_url": server.url,
        "retry_initial_seconds": 0.01,
        "retry_max_seconds": 0.02,
        "retry_deadline_seconds": 5,
        "timeout_seconds": 5,
    }
    section.update(gcp)
    return Settings(gcp=section)


def collect(
    settings: Settings, scope: frozenset[PricingModel] = ALL_PRICING
) -> tuple[dict[tuple[str, str, PricingModel], Offer], RunContext]:
    ctx = run_context(settings, scope=scope)
    offers = list(GcpCollector.from_settings(settings).collect(ctx))
    by_key = {(o.instance_type, o.region, o.pricing): o for o in offers}
    assert len(by_key) == len(offers), "offer identities must be unique"
    return by_key, ctx


D = Decimal
SSD_HOUR = D("0.08") / 730  # "SSD backed Local Storage in Iowa": $0.08 per GiB-month
OD, SPOT, R1, R3 = (
    PricingModel.ON_DEMAND,
    PricingModel.SPOT,
    PricingModel.RESERVED_1Y,
    PricingModel.RESERVED_3Y,
)

# Hand-computed sums: vCPUs x core + GiB x RAM + GPUs x GPU (+ GiB x SSD/730), the
# per-unit prices read off the fixture pages.
EXPECTED = {
    ("a2-highgpu-1g", "us-central1", OD): 12 * D("0.031611") + 85 * D("0.004237") + D("2.933908"),
    ("a2-highgpu-1g", "us-west1", SPOT): 12 * D("0.009483") + 85 * D("0.001271") + D("1.1"),
    ("a2-highgpu-1g", "asia-east1", R1): (12 * D("0.0230593") + 85 * D("0.003091") + D("1.848362")),
    ("a2-ultragpu-8g", "us-central1", OD): (
        96 * D("0.031611") + 1360 * D("0.004237") + 8 * D("3.932769") + 3000 * SSD_HOUR
    ),
    ("a3-highgpu-8g", "us-central1", OD): (
        208 * D("0.029917") + 1872 * D("0.002994") + 8 * D("9.796550569") + 6000 * SSD_HOUR
    ),
    ("g2-standard-4", "europe-west1", OD): 4 * D("0.02458") + 16 * D("0.00288") + D("0.61633"),
    ("n1-standard-4+1xnvidia-tesla-t4", "us-east1", OD): (
        4 * D("0.031611") + 15 * D("0.004237") + D("0.35")
    ),
    ("n1-standard-8+2xnvidia-tesla-t4", "us-central1", R3): (
        8 * D("0.014225") + 30 * D("0.001907") + 2 * D("0.16")
    ),
}


def test_prices_are_composed_from_the_paginated_catalog(server: CatalogServer) -> None:
    offers, ctx = collect(make_settings(server))

    for key, price in EXPECTED.items():
        offer = offers[key]
        assert offer.price_per_hour.quantize(D("1e-12")) == price.quantize(D("1e-12")), key
        assert offer.currency == "USD"
        assert offer.price_per_hour_usd == offer.price_per_hour
        assert offer.provider == "gcp"

    requests = server.sku_requests()
    assert [r["query"].get("pageToken", "") for r in requests] == ["", TOKEN_2, TOKEN_3]
    assert all(r["headers"].get("x-goog-api-key") == API_KEY for r in requests)
    assert all(r["query"]["currencyCode"] == "USD" for r in requests)
    assert all(r["query"]["pageSize"] == "5000" for r in requests)
    # the bad SKUs on page 2 are skipped and counted, the rest priced
    assert ctx.skips["unrecognised_sku"] == 1
    assert ctx.skips["no_applicable_rate"] == 1
    assert not any(o.gpu_raw_name == "nvidia-tesla-p100" for o in offers.values())


def test_offers_carry_the_machine_shape(server: CatalogServer) -> None:
    offers, _ = collect(make_settings(server))
    a3 = offers[("a3-highgpu-8g", "us-central1", OD)]
    assert (a3.vcpus, a3.memory_gib, a3.gpu_count, a3.gpu_memory_gib) == (208, 1872, 8, 80)
    assert a3.interconnect == "nvlink"
    assert a3.gpu_raw_name == "nvidia-h100-80gb"
    expected = resolve_gpu("H100 80GB", 80)
    assert (a3.gpu_model, a3.gpu_known) == (expected.name, expected.known)
    assert a3.attributes["local_ssd_gib"] == 6000
    assert a3.attributes["sku_ids"] == "D001-A3C0-0010,D001-A3R0-0011,D001-H100-0012,D001-LSSD-0007"
    n1 = offers[("n1-standard-4+1xnvidia-tesla-t4", "us-east1", OD)]
    assert (n1.vcpus, n1.memory_gib, n1.gpu_count) == (4, D("15.00"), 1)
    assert n1.attributes["machine_type"] == "n1-standard-4"
    reserved = offers[("n1-standard-8+2xnvidia-tesla-t4", "us-central1", R3)]
    assert reserved.attributes["upfront_usd"] == 0
    assert reserved.attributes["recurring_hourly_usd"] == reserved.price_per_hour


def test_a_region_missing_a_component_is_a_counted_skip_not_a_partial_price(
    server: CatalogServer,
) -> None:
    offers, ctx = collect(make_settings(server))
    # local SSD is only priced in us-central1, so the A2 Ultra shapes exist only there
    assert ("a2-ultragpu-1g", "us-central1", OD) in offers
    assert ("a2-ultragpu-1g", "us-east1", OD) not in offers
    assert "missing_component: a2-ultragpu-1g in us-east1 (on_demand): no local_ssd SKU" in (
        ctx.details
    )
    # spot A100s exist but A2 spot is complete only for A2 Standard; no A100 80GB spot SKU
    assert ("a2-ultragpu-1g", "us-central1", SPOT) not in offers
    assert ctx.skips["missing_component"] > 0


def test_429_and_5xx_are_retried_then_succeed(server: CatalogServer) -> None:
    baseline, _ = collect(make_settings(server))
    server.requests.clear()
    server.failures[TOKEN_2] = [
        (429, error_body(429, "RESOURCE_EXHAUSTED", "Quota exceeded")),
        (503, error_body(503, "UNAVAILABLE", "The service is currently unavailable.")),
    ]
    server.failures[TOKEN_3] = [(500, error_body(500, "INTERNAL", "Internal error"))]
    offers, _ = collect(make_settings(server))
    assert offers == baseline
    tokens = [r["query"].get("pageToken", "") for r in server.sku_requests()]
    assert tokens == ["", TOKEN_2, TOKEN_2, TOKEN_2, TOKEN_3, TOKEN_3]


def test_persistent_5xx_fails_the_run_with_one_clear_line(server: CatalogServer) -> None:
    server.failures[TOKEN_2] = [(503, error_body(503, "UNAVAILABLE", "down"))] * 1000
    settings = make_settings(server, retry_deadline_seconds=0.2)
    with pytest.raises(CollectorError) as info:
        collect(settings)
    message = str(info.value)
    assert "page 2" in message and "503" in message
    assert "\n" not in message


def test_invalid_api_key_fails_at_once_with_the_provider_message(server: CatalogServer) -> None:
    server.failures[""] = [
        (400, (FIXTURES / "error_api_key_invalid_opencost.json").read_bytes())
    ] * 5
    with pytest.raises(CollectorError, match="API key not valid") as info:
        collect(make_settings(server))
    assert API_KEY not in str(info.value)
    assert len(server.sku_requests()) == 1  # a 400 is not retried


def test_pricing_scope_limits_what_is_collected(server: CatalogServer) -> None:
    offers, _ = collect(make_settings(server), frozenset({SPOT}))
    assert offers
    assert {o.pricing for o in offers.values()} == {SPOT}


def test_regions_setting_limits_regions(server: CatalogServer) -> None:
    offers, _ = collect(make_settings(server, regions="europe-west1,asia-east1"))
    assert {o.region for o in offers.values()} == {"europe-west1", "asia-east1"}


def test_non_usd_skus_are_kept_in_their_currency(server: CatalogServer) -> None:
    raw = json.loads(PAGE_3)
    for sku in raw["skus"]:  # the G2/L4 SKUs priced in EUR: values changed only
        if "Belgium" in sku["description"]:
            sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"][
                "currencyCode"
            ] = "EUR"
    server.pages[TOKEN_3] = json.dumps(raw).encode()

    # no rate is needed to collect them: the USD figure is computed when read
    offers, ctx = collect(make_settings(server))
    assert "non_usd" not in ctx.skips
    g2 = offers[("g2-standard-4", "europe-west1", OD)]
    assert g2.currency == "EUR"
    assert g2.price_per_hour == EXPECTED[("g2-standard-4", "europe-west1", OD)]
    assert g2.price_per_hour_usd is None


def test_conflicting_skus_make_a_component_ambiguous(server: CatalogServer) -> None:
    page = billing_v1.ListSkusResponse.from_json(PAGE_3.decode(), ignore_unknown_fields=True)
    skus = list(page.skus)
    twin = billing_v1.Sku(skus[8])  # Nvidia Tesla T4 GPU running in Americas
    twin.sku_id = "D001-T4XX-9999"
    twin.pricing_info[0].pricing_expression.tiered_rates[0].unit_price.nanos = 360000000
    ctx = run_context(make_settings(server))
    table = parse_skus([*skus, twin], ctx.skip)
    offers = list(compose_offers(table, ctx.skip, shapes=MACHINE_SHAPES))
    assert not any(o.gpu_raw_name == "nvidia-tesla-t4" and o.pricing is OD for o in offers)
    assert ctx.skips["conflicting_sku"] == 3  # one per region of the twin
    assert ctx.skips["ambiguous_component"] > 0


def test_missing_credentials_skip_gcp_with_one_clear_line() -> None:
    with pytest.raises(MissingCredentials) as info:
        GcpCollector.from_settings(Settings())
    message = str(info.value)
    assert "GPU_TRACKER_GCP__API_KEY" in message and "Application Default Credentials" in message
    assert "\n" not in message


def test_disabled_gcp_is_not_configured() -> None:
    with pytest.raises(NotConfigured, match="disabled"):
        GcpCollector.from_settings(Settings(gcp={"enabled": False}))


def test_api_key_file_is_read(tmp_path: Path, server: CatalogServer) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("from-file-key\n")
    settings = make_settings(server, api_key=None, api_key_file=str(key_file))
    collect(settings)
    assert server.sku_requests()[0]["headers"]["x-goog-api-key"] == "from-file-key"


def test_application_default_credentials_are_used_without_a_key(
    server: CatalogServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "client-id",
                "client_secret": "client-secret",
                "refresh_token": "refresh-token",
                # a still-valid access token: no refresh, so no call to Google's token URL
                "token": "local-access-token",
                "expiry": "2999-01-01T00:00:00Z",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    offers, _ = collect(make_settings(server, api_key=None))
    assert offers
    headers = server.sku_requests()[0]["headers"]
    assert headers.get("authorization") == "Bearer local-access-token"
    assert "x-goog-api-key" not in headers


def test_default_endpoint_is_googles_over_https() -> None:
    collector = GcpCollector(Settings(), api_key="k")
    assert collector._client().transport._host == "https://cloudbilling.googleapis.com"


def test_the_planned_gcp_job_gets_spot_and_list_prices_from_one_catalog_pass(
    server: CatalogServer,
) -> None:
    """The catalog has no usage-type filter: the service plans one GCP job for every
    pricing model, and one run of it pages through the catalog once."""
    from tracker.service.jobs import plan_jobs
    from tracker.settings import SchedulerSettings

    services, job = plan_jobs({"gcp": GcpCollector}, SchedulerSettings())
    assert (services.id, job.id) == ("gcp:services", "gcp:standard")  # disks/egress: daily
    # every pricing model GCP sells (savings plans are AWS's own)
    assert job.pricing_scope == WITHOUT_SAVINGS_PLANS and job.interval_seconds == 360 * 60
    offers, _ = collect(make_settings(server), job.pricing_scope)
    tokens = [r["query"].get("pageToken", "") for r in server.sku_requests()]
    assert tokens == ["", TOKEN_2, TOKEN_3]
    assert {o.pricing for o in offers.values()} == {OD, SPOT, R1, R3}
    spot = offers[("a2-highgpu-1g", "us-west1", SPOT)]
    assert spot.price_per_hour == EXPECTED[("a2-highgpu-1g", "us-west1", SPOT)]


TPU_PAGE = (FIXTURES / "catalog_tpu_page_derived.json").read_bytes()


def test_tpu_slices_are_priced_per_chip_from_the_same_catalog() -> None:
    """Cloud TPU SKUs (resourceGroup TPU) price a chip-hour, host included: a slice is
    chips x that price, in every region the SKU lists, with ICI as its fabric."""
    with serving({"": TPU_PAGE}) as tpu_server:
        offers, ctx = collect(make_settings(tpu_server))
    # "TpuV5e running in Delhi" 1.44132 per chip-hour: 1 / 4 / 8-chip v5e slices.
    assert offers[("ct5lp-hightpu-1t", "asia-south2", OD)].price_per_hour == D("1.44132")
    assert offers[("ct5lp-hightpu-4t", "asia-south2", OD)].price_per_hour == D("5.76528")
    assert offers[("ct5lp-hightpu-8t", "asia-south2", OD)].price_per_hour == D("11.53056")
    # spot ("attached to Spot Preemptible VMs"): 8 x 0.6607 = 5.2856
    assert offers[("ct5lp-hightpu-8t", "europe-west1", SPOT)].price_per_hour == D("5.2856")
    # "Commitment v1: TpuV5p ... for 3 Years": 4 chips x 1.89 = 7.56, billed monthly
    v5p_3y = offers[("ct5p-hightpu-4t", "europe-west4", R3)]
    assert v5p_3y.price_per_hour == D("7.56")
    assert v5p_3y.attributes["upfront_usd"] == 0
    # the calendar-mode reservation says OnDemand but is never an on-demand price: the
    # only v5p on-demand offer is the list SKU's 4 x 4.2 = 16.8
    assert offers[("ct5p-hightpu-4t", "us-east5", OD)].price_per_hour == D("16.8")
    assert ctx.skips["reservation_sku"] == 1
    assert any("Calendar Mode" in d for d in ctx.details)
    # "TPU7x running in Americas" is one multi-regional SKU: expanded to each region
    for region in ("us-central1", "us-east5", "us-south1"):
        assert offers[("tpu7x-standard-4t", region, OD)].price_per_hour == 4 * D(12)
    v6e = offers[("ct6e-standard-8t", "us-east1", OD)]
    assert v6e.price_per_hour == 8 * D("2.7")
    # chips, HBM per chip and the host from Google's tables; ICI stated:
    # v6e 800 GB/s bidirectional = 3,200 Gbit/s each way per chip, x 8 chips = 25,600
    assert (v6e.gpu_model, v6e.gpu_count, v6e.gpu_memory_gib) == ("TPU-v6e", 8, 32)
    assert (v6e.vcpus, v6e.memory_gib) == (180, 1440)
    assert (v6e.fabric, v6e.network_gbps) == ("ici", D(25600))
    assert v6e.interconnect == "gpu_fabric"
    assert v6e.attributes["accelerator_type"] == "v6e-8"
    tpu7x = offers[("tpu7x-standard-4t", "us-east5", OD)]
    assert (tpu7x.gpu_model, tpu7x.gpu_memory_gib, tpu7x.network_gbps) == ("TPU7x", 192, 19200)
    # no TPU price was read as a GPU or machine component
    assert all(o.gpu_model.startswith("TPU") for o in offers.values())


def test_a3_carries_the_documented_fabric_and_n1_stays_unknown(server: CatalogServer) -> None:
    offers, _ = collect(make_settings(server))
    a3 = offers[("a3-highgpu-8g", "us-central1", OD)]
    # Google's table: "A3 High | NVIDIA H100 80GB | 1,000 Gbps | GPUDirect-TCPX".
    assert (a3.fabric, a3.network_gbps) == ("gpudirect_tcpx", D(1000))
    n1 = offers[("n1-standard-4+1xnvidia-tesla-t4", "us-east1", OD)]
    assert (n1.fabric, n1.network_gbps) == ("unknown", None)
