"""The Alibaba collector end to end: Alibaba's own SDK against a real HTTP server on
127.0.0.1 that answers recorded responses (tests/fixtures/alibaba/, see SOURCES.md).

The server recomputes every request's ACS3-HMAC-SHA256 signature from Alibaba's
documented algorithm (canonical request -> string to sign -> HMAC-SHA256 with the
secret) and answers ``SignatureDoesNotMatch`` when it differs, so a request the SDK
did not sign with our credentials can never be priced.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, select

from collectors.alibaba import ENV_KEY_ID, ENV_KEY_SECRET, AlibabaCollector
from collectors.base import CollectorError, MissingCredentials, RunContext
from tests.collectors.conftest import run_context
from tracker.collect import run_collector
from tracker.models import Offer, PricingModel
from tracker.settings import ConfigError, Settings, load_settings
from tracker.store.schema import PricePoint, Series

FIXTURES = Path(__file__).parents[1] / "fixtures" / "alibaba"
KEY_ID, SECRET = "LTAI-test-key-id", "test-secret-never-sent"
_AUTH = re.compile(
    r"ACS3-HMAC-SHA256 Credential=(?P<cred>[^,]+),"
    r"SignedHeaders=(?P<signed>[^,]+),Signature=(?P<sig>[0-9a-f]{64})"
)


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _enc(text: str) -> str:
    return quote(text, safe="-_.~")


def signature_ok(method: str, target: str, headers: Any, body: bytes) -> bool:
    """Alibaba's V3 signature, computed here independently of the SDK."""
    match = _AUTH.fullmatch(headers.get("Authorization", ""))
    if match is None or match["cred"] != KEY_ID:
        return False
    payload = hashlib.sha256(body).hexdigest()
    if headers.get("x-acs-content-sha256") != payload:
        return False
    path, _, query = target.partition("?")
    pairs = sorted(parse_qsl(query, keep_blank_values=True))
    canonical_query = "&".join(f"{_enc(k)}={_enc(v)}" for k, v in pairs)
    names = match["signed"].split(";")
    canonical_headers = "".join(f"{n}:{(headers.get(n) or '').strip()}\n" for n in names)
    canonical = "\n".join(
        [method, path or "/", canonical_query, canonical_headers, match["signed"], payload]
    )
    to_sign = "ACS3-HMAC-SHA256\n" + hashlib.sha256(canonical.encode()).hexdigest()
    expected = hmac.new(SECRET.encode(), to_sign.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, match["sig"])


class FakeEcs:
    """Routes (action, parameters) to recorded responses; ``queued`` answers first."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.queued: dict[str, list[tuple[int, str]]] = {}
        self.unsigned = 0

    def answer(self, action: str, q: dict[str, str]) -> tuple[int, str]:
        if self.queued.get(action):
            return self.queued[action].pop(0)
        region = q.get("RegionId", "")
        if region not in ("", "cn-hangzhou", "ap-southeast-1"):
            return 404, "error_InvalidRegionId.NotFound.json"
        if action == "DescribeInstanceTypes":
            page = "page2" if q.get("NextToken") == "e71d8a535bd9cc11" else "page1"
            return 200, f"DescribeInstanceTypes_{page}.json"
        if action == "DescribePrice":
            return self._price(region, q)
        if action == "DescribeSpotPriceHistory":
            if region == "cn-hangzhou" and q.get("InstanceType") == "ecs.gn7i-c8g1.2xlarge":
                page = "page2" if q.get("Offset") == "2" else "page1"
                return 200, f"DescribeSpotPriceHistory_{page}.json"
            return 200, "empty_spot"
        if action == "DescribeSpotAdvice":
            return 200, "DescribeSpotAdvice.json"
        raise AssertionError(f"unexpected action {action}")

    @staticmethod
    def _price(region: str, q: dict[str, str]) -> tuple[int, str]:
        kind = q.get("InstanceType", "")
        unit = q["PriceUnit"] + q.get("Period", "")
        table = {
            ("cn-hangzhou", "ecs.gn7i-c8g1.2xlarge", "Hour"): "DescribePrice_gn7i_hour.json",
            ("cn-hangzhou", "ecs.gn7i-c8g1.2xlarge", "Year1"): "DescribePrice_gn7i_year1.json",
            ("cn-hangzhou", "ecs.gn7i-c8g1.2xlarge", "Year3"): "DescribePrice_gn7i_year3.json",
            ("cn-hangzhou", "ecs.ebmgn7e.32xlarge", "Hour"): "DescribePrice_ebmgn7e_hour.json",
            ("ap-southeast-1", "ecs.vgn7i-vws-m4.xlarge", "Hour"): (
                "DescribePrice_vgn7i_hour_usd.json"
            ),
        }
        name = table.get((region, kind, unit))
        return (200, name) if name else (400, "error_PriceNotFound.json")


@pytest.fixture
def ecs_server() -> Iterator[tuple[FakeEcs, str]]:
    fake = FakeEcs()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            action = self.headers.get("x-acs-action", "")
            query = dict(parse_qsl(self.path.partition("?")[2]))
            fake.requests.append((action, query))
            if not signature_ok("POST", self.path, self.headers, body):
                fake.unsigned += 1
                status, payload = (
                    400,
                    json.dumps({"Code": "SignatureDoesNotMatch", "Message": "signature mismatch"}),
                )
            else:
                status, name = fake.answer(action, query)
                if name == "empty_spot":
                    payload = json.dumps({"SpotPrices": {"SpotPriceType": []}, "Currency": "CNY"})
                else:
                    payload = (FIXTURES / name).read_text(encoding="utf-8")
            data = payload.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json;charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


NOW = datetime(2026, 11, 29, 0, 0, tzinfo=UTC)
SLEPT: list[float] = []


def collector(
    endpoint: str, *, secret: str = SECRET, **section: Any
) -> tuple[AlibabaCollector, Settings]:
    section.setdefault("regions", ["cn-hangzhou"])
    settings = Settings(alibaba={"endpoint_url": endpoint, **section})
    env = {ENV_KEY_ID: KEY_ID, ENV_KEY_SECRET: secret}
    built = AlibabaCollector.from_settings(settings, env)
    built._sleep = SLEPT.append
    built._clock = lambda: NOW
    return built, settings


def run(built: AlibabaCollector, ctx: RunContext) -> dict[tuple[str, str, str, str], Offer]:
    offers = list(built.collect(ctx))
    keyed = {(o.instance_type, o.region, o.zone, o.pricing.value): o for o in offers}
    return keyed


def test_offers_through_the_sdk_checked_by_hand(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    built, settings = collector(endpoint, regions="cn-hangzhou,ap-southeast-1")
    ctx = run_context(settings)
    offers = run(built, ctx)

    assert fake.requests and fake.unsigned == 0  # every request carried a valid signature

    # ecs.gn7i-c8g1.2xlarge, pay-as-you-go: the instanceType line of DetailInfos (11.55),
    # not the total with the system disk (11.636); CNY from the response.
    hour = offers[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou", "", "on_demand")]
    assert (hour.gpu_model, hour.gpu_count, hour.gpu_memory_gib) == ("A10", 1, 24)
    assert (hour.price_per_hour, hour.currency) == (Decimal("11.55"), "CNY")
    assert hour.price_per_hour_usd is None  # stored in CNY; USD is computed when read
    assert "list_price_per_hour" not in hour.attributes  # list == trade
    assert (hour.vcpus, hour.memory_gib) == (8, 30)

    # 1 year: TradePrice 3712.8 ÷ 8,760 h = 0.42383561643… → 0.4238356164;
    # list OriginalPrice 4368 ÷ 8,760 = 0.49863013698… → 0.4986301370.
    one = offers[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou", "", "reserved_1y")]
    assert one.price_per_hour == Decimal("0.4238356164")
    assert one.attributes["list_price_per_hour"] == Decimal("0.4986301370")
    assert one.attributes["term_price"] == Decimal("3712.8")
    # 3 years: 7862.4 ÷ (3 × 8,760 = 26,280) = 0.29917808219… → 0.2991780822.
    three = offers[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou", "", "reserved_3y")]
    assert three.price_per_hour == Decimal("0.2991780822")
    assert three.attributes["list_price_per_hour"] == Decimal("0.4986301370")  # 13104 ÷ 26280

    # 8 × A100 80 GB (GPUMemorySize 80 is per GPU): the 80 GB catalog part; no DetailInfos,
    # so the total is the price and says so.
    a100 = offers[("ecs.ebmgn7e.32xlarge", "cn-hangzhou", "", "on_demand")]
    assert (a100.gpu_model, a100.gpu_count, a100.gpu_memory_gib) == ("A100-80GB", 8, 80)
    assert a100.attributes["vram_total_gib"] == 640  # 8 × 80
    assert a100.price_per_hour == Decimal("247.36")
    assert a100.attributes["price_basis"] == "total"

    # The 1/6 A10 vGPU on the international site: USD, trade 0.48 against list 0.6.
    slice_ = offers[("ecs.vgn7i-vws-m4.xlarge", "ap-southeast-1", "", "on_demand")]
    assert slice_.gpu_model == "A10" and slice_.gpu_raw_name == "NVIDIA A10*1/6"
    assert slice_.gpu_count == Decimal("0.1666666667")  # 1 × 1/6 at 10 places
    assert slice_.gpu_memory_gib == 24  # GPUMemorySize 4 is the slice's: 4 × 6 / 1
    assert slice_.attributes["vram_total_gib"] == 4
    assert (slice_.price_per_hour, slice_.currency, slice_.usd) == (
        Decimal("0.48"),
        "USD",
        Decimal("0.48"),  # a USD price is its own USD figure
    )
    assert slice_.attributes["list_price_per_hour"] == Decimal("0.6")

    # Spot: every zone's point at its own time; NextOffset 2 fetched the second page.
    g = offers[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou", "cn-hangzhou-g", "spot")]
    assert g.price_per_hour == Decimal("1.386")  # the 07:00 point is the latest of two
    assert g.attributes["list_price_per_hour"] == Decimal("11.55")  # OriginPrice
    assert g.attributes["interruption_bucket"] == "3-5%"
    assert g.attributes["interruption_rate_pct"] == 4
    h = offers[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou", "cn-hangzhou-h", "spot")]
    assert h.price_per_hour == Decimal("1.2705")
    assert h.observed_at == datetime(2026, 11, 28, 6, tzinfo=UTC)
    assert "interruption_bucket" not in h.attributes  # no advice for that zone
    offsets = [
        q.get("Offset")
        for a, q in fake.requests
        if a == "DescribeSpotPriceHistory" and q["InstanceType"] == "ecs.gn7i-c8g1.2xlarge"
    ]
    assert offsets == [None, "2"]  # page 2 has no NextOffset: the end
    advice = [q for a, q in fake.requests if a == "DescribeSpotAdvice"]
    assert advice[0] == {
        "RegionId": "cn-hangzhou",
        "InstanceTypes.1": "ecs.ebmgn7e.32xlarge",
        "InstanceTypes.2": "ecs.gn7i-c8g1.2xlarge",
    }  # the types priced in the region, at most 10 a call

    # Requests as the issue specifies them.
    prices = [q for a, q in fake.requests if a == "DescribePrice"]
    assert {(q["PriceUnit"], q.get("Period")) for q in prices} == {
        ("Hour", None),
        ("Year", "1"),
        ("Year", "3"),
    }
    assert all(q["ResourceType"] == "instance" for q in prices)
    types = [q for a, q in fake.requests if a == "DescribeInstanceTypes"]
    assert types[0]["MinimumGPUAmount"] == "1"
    # Prices the API does not have here are counted, not guessed.
    assert ctx.skips["no_price"] > 0 and not ctx.partial


def test_spot_is_incremental_from_the_last_stored_point(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    built, settings = collector(endpoint)
    since = datetime(2026, 11, 28, 6, 30, tzinfo=UTC)
    ctx = run_context(
        settings,
        scope=frozenset({PricingModel.SPOT}),
        last_observed={(PricingModel.SPOT, "cn-hangzhou"): since},
    )
    list(built.collect(ctx))
    starts = {q["StartTime"] for a, q in fake.requests if a == "DescribeSpotPriceHistory"}
    assert starts == {"2026-11-28T06:30:00Z"}
    assert not [a for a, _ in fake.requests if a == "DescribePrice"]  # spot-only run

    fake.requests.clear()
    first = run_context(settings, scope=frozenset({PricingModel.SPOT}))
    list(built.collect(first))
    starts = {q["StartTime"] for a, q in fake.requests if a == "DescribeSpotPriceHistory"}
    assert starts == {"2026-11-26T00:00:00Z"}  # NOW − spot_lookback_days (3)


def test_throttling_is_retried_with_backoff(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    fake.queued["DescribeInstanceTypes"] = [(403, "error_Throttling.json")] * 2
    built, settings = collector(endpoint, spot=False)
    SLEPT.clear()
    offers = run(built, run_context(settings))
    assert ("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou", "", "on_demand") in offers
    assert SLEPT == [1.0, 2.0]  # two throttled answers, exponential backoff


def test_throttling_past_the_attempts_gives_one_line(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    fake.queued["DescribeInstanceTypes"] = [(403, "error_Throttling.json")] * 3
    built, settings = collector(endpoint, max_attempts=3)
    with pytest.raises(CollectorError) as caught:
        list(built.collect(run_context(settings)))
    message = str(caught.value)
    assert message == (
        "alibaba: every region failed (1); first: cn-hangzhou: DescribeInstanceTypes in "
        "cn-hangzhou: Throttling: Request was denied due to request throttling. (HTTP 403)"
    )


def test_refused_key_is_one_line_naming_the_variables(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    fake.queued["DescribeInstanceTypes"] = [(404, "error_InvalidAccessKeyId.NotFound.json")]
    built, settings = collector(endpoint, regions="cn-hangzhou,ap-southeast-1")
    with pytest.raises(CollectorError) as caught:
        list(built.collect(run_context(settings)))
    message = str(caught.value)
    assert "\n" not in message and SECRET not in message
    assert message.startswith("alibaba: credentials refused: DescribeInstanceTypes in cn-hangzhou")
    assert "InvalidAccessKeyId.NotFound: Specified access key is not found." in message
    assert f"{ENV_KEY_ID} / {ENV_KEY_SECRET}" in message
    assert len(fake.requests) == 1  # the second region is not tried with a refused key


def test_a_wrong_secret_fails_the_servers_signature_check(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    built, settings = collector(endpoint, secret="some-other-secret")
    with pytest.raises(CollectorError, match=r"credentials refused.*SignatureDoesNotMatch"):
        list(built.collect(run_context(settings)))
    assert fake.unsigned == 1


def test_unknown_region_is_partial_with_one_line(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    fake.queued["DescribeInstanceTypes"] = [(404, "error_InvalidRegionId.NotFound.json")]
    built, settings = collector(endpoint, regions="cn-nowhere-1,cn-hangzhou", spot=False)
    ctx = run_context(settings)
    offers = run(built, ctx)
    assert ctx.partial == {
        "cn-nowhere-1": "DescribeInstanceTypes in cn-nowhere-1: InvalidRegionId.NotFound: "
        "The RegionId provided does not exist in our records. (HTTP 404)"
    }
    assert {region for _, region, _, _ in offers} == {"cn-hangzhou"}


def test_cny_prices_are_kept_without_any_exchange_rate(ecs_server: tuple[FakeEcs, str]) -> None:
    """The collector stores each price in its own currency: no fx_rates is needed (the
    USD figure is computed when read), so nothing is skipped for want of a rate."""
    _, endpoint = ecs_server
    built, settings = collector(endpoint, spot=False)
    settings = settings.model_copy(update={"fx_rates": {}})
    built.settings = settings
    ctx = run_context(settings)
    offers = run(built, ctx)
    # every cn-hangzhou price is CNY: gn7i hour/1y/3y + ebmgn7e hour
    assert sorted((k[0], k[3], o.currency) for k, o in offers.items()) == [
        ("ecs.ebmgn7e.32xlarge", "on_demand", "CNY"),
        ("ecs.gn7i-c8g1.2xlarge", "on_demand", "CNY"),
        ("ecs.gn7i-c8g1.2xlarge", "reserved_1y", "CNY"),
        ("ecs.gn7i-c8g1.2xlarge", "reserved_3y", "CNY"),
    ]
    assert offers[("ecs.gn7i-c8g1.2xlarge", "cn-hangzhou", "", "on_demand")].price_per_hour == (
        Decimal("11.55")
    )
    assert "no_fx_rate" not in ctx.skips


def test_missing_credentials_skip_the_provider_naming_the_variables() -> None:
    with pytest.raises(MissingCredentials) as caught:
        AlibabaCollector.from_settings(Settings(), {ENV_KEY_ID: "only-the-id"})
    assert str(caught.value) == (f"alibaba: no credentials (set {ENV_KEY_ID} and {ENV_KEY_SECRET})")


def test_connection_failure_is_retried_then_one_line() -> None:
    built, settings = collector("http://127.0.0.1:9", spot=False, max_attempts=2)
    SLEPT.clear()
    with pytest.raises(CollectorError) as caught:
        list(built.collect(run_context(settings)))
    assert SLEPT == [1.0]  # one retry after the refused connection
    assert str(caught.value) == (
        "alibaba: every region failed (1); first: cn-hangzhou: DescribeInstanceTypes in "
        "cn-hangzhou: Network: [Errno 111] Connection refused"
    )


def test_regions_and_endpoint_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    default = AlibabaCollector(Settings(), SecretStr(KEY_ID), SecretStr(SECRET))
    assert default.client("ap-southeast-1")._endpoint == "ecs.ap-southeast-1.aliyuncs.com"
    monkeypatch.setenv("GPU_TRACKER_ALIBABA__REGIONS", "cn-hangzhou, ap-southeast-1")
    monkeypatch.setenv("GPU_TRACKER_ALIBABA__ENDPOINT_URL", "http://127.0.0.1:8080/")
    section = load_settings().alibaba
    assert section.regions == ["cn-hangzhou", "ap-southeast-1"]
    assert section.endpoint_url == "http://127.0.0.1:8080"
    built = AlibabaCollector(load_settings(), SecretStr(KEY_ID), SecretStr(SECRET))
    client = built.client("cn-hangzhou")
    assert (client._endpoint, client._protocol) == ("127.0.0.1:8080", "http")

    monkeypatch.setenv("GPU_TRACKER_ALIBABA__ENDPOINT_URL", "http://127.0.0.1:8080/v1")
    with pytest.raises(ConfigError, match=r"alibaba\.endpoint_url"):
        load_settings()


def test_stored_run_keeps_cny_and_the_next_spot_read_starts_at_the_last_point(
    ecs_server: tuple[FakeEcs, str], sqlite_engine: Engine
) -> None:
    fake, endpoint = ecs_server
    built, settings = collector(endpoint)
    summary = run_collector(sqlite_engine, built, settings, now=NOW)
    assert summary.status == "succeeded", summary.error
    with sqlite_engine.connect() as conn:
        rows = conn.execute(
            select(Series.instance_type, Series.zone, Series.pricing, PricePoint.price)
            .join(PricePoint, PricePoint.series_id == Series.id)
            .where(Series.instance_type == "ecs.gn7i-c8g1.2xlarge")
            .order_by(Series.zone, Series.pricing, PricePoint.first_seen)
        ).all()
    stored = {(zone, pricing): [] for _, zone, pricing, _ in rows}
    for _, zone, pricing, price in rows:
        stored[(zone, pricing)].append(Decimal(price))
    assert stored[("", "on_demand")] == [Decimal("11.55")]  # CNY, as the API gave it
    assert stored[("", "reserved_1y")] == [Decimal("0.4238356164")]
    assert stored[("cn-hangzhou-g", "spot")] == [Decimal("1.155"), Decimal("1.386")]

    fake.requests.clear()
    spot_only = frozenset({PricingModel.SPOT})
    later = NOW + timedelta(hours=1)
    summary = run_collector(sqlite_engine, built, settings, pricing_scope=spot_only, now=later)
    assert summary.status == "succeeded", summary.error
    starts = {q["StartTime"] for a, q in fake.requests if a == "DescribeSpotPriceHistory"}
    assert starts == {"2026-11-28T07:00:00Z"}  # the newest stored point, not NOW − 3 days


def test_a_repeating_next_token_stops_the_region(ecs_server: tuple[FakeEcs, str]) -> None:
    fake, endpoint = ecs_server
    fake.queued["DescribeInstanceTypes"] = [(200, "DescribeInstanceTypes_page1.json")] * 2
    built, settings = collector(endpoint, regions="cn-hangzhou,ap-southeast-1", spot=False)
    ctx = run_context(settings)
    run(built, ctx)
    assert ctx.partial["cn-hangzhou"] == (
        "DescribeInstanceTypes in cn-hangzhou: Pagination: NextToken repeats"
    )


def test_listing_collectors_does_not_import_the_sdk() -> None:
    """Every CLI command that lists collectors imports this module; the SDK takes
    seconds to import, so it is imported only when Alibaba is actually called."""
    code = (
        "import sys, collectors.alibaba; "
        "sys.exit(any(m.startswith(('alibabacloud_', 'Tea', 'darabonba')) for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
