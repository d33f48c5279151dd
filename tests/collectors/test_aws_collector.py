"""AwsCollector end to end: botocore Stubber with recorded payloads, the real runner and store."""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from sqlalchemy import Engine, select

from collectors.aws import AwsCollector, instance_type_filters, price_list_filters
from collectors.aws_spot_advisor import parse_spot_advisor
from collectors.base import CollectorError, NotConfigured
from tracker import registry
from tracker.collect import run_collector
from tracker.models import PricingModel
from tracker.settings import Settings
from tracker.store.schema import PricePoint, Series

from .aws_helpers import Answer, LocalAwsServer, gpu_items, instance_type_items, load
from .conftest import MakeContext

NOW = datetime(2021, 2, 9, 12, 0, tzinfo=UTC)
US = "US East (N. Virginia)"
ADVICE = parse_spot_advisor(load("spot_advisor_data_trimmed.json"))


def _settings(**aws: Any) -> Settings:
    """One region; savings plans off unless asked for (tests/collectors/test_aws_savings.py
    runs them), so these stubs need no Savings Plans answers."""
    aws.setdefault("regions", ["us-east-1"])
    aws.setdefault("savings_plans", False)
    aws.setdefault("capacity_blocks", False)  # tests/collectors/test_aws_capacity_blocks.py
    return Settings(aws=aws)


def _session() -> boto3.Session:
    return boto3.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
    )


class Harness:
    """An AwsCollector whose real boto3 clients are wrapped in activated Stubbers."""

    def __init__(self, settings: Settings, *, clock: datetime = NOW) -> None:
        self.collector = AwsCollector(
            settings, session=_session(), advisor_loader=lambda: ADVICE, clock=lambda: clock
        )
        self.stubbers: dict[tuple[str, str], Stubber] = {}
        self.calls: list[str] = []
        """Every API call the collector made, as ``service:Operation``, in order."""

    def stub(self, service: str, region: str) -> Stubber:
        key = (service, region)
        if key not in self.stubbers:
            client = self.collector.client(service, region)

            def record(model: Any, **_: Any) -> None:
                self.calls.append(f"{service}:{model.name}")

            client.meta.events.register("before-parameter-build", record)
            stubber = Stubber(client)
            stubber.activate()
            self.stubbers[key] = stubber
        return self.stubbers[key]

    def instance_types(self, region: str, items: list[dict[str, Any]] | None = None) -> None:
        page = {"InstanceTypes": items if items is not None else instance_type_items()}
        self.stub("ec2", region).add_response("describe_instance_types", page, {})

    def products(
        self, region: str, price_list: list[str], types: list[str], next_token: str | None = None
    ) -> None:
        expected: dict[str, Any] = {
            "ServiceCode": "AmazonEC2",
            "Filters": price_list_filters(region, ",".join(sorted(types))),
            "FormatVersion": "aws_v1",
            "MaxResults": 100,
        }
        response: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": price_list}
        if next_token:
            response["NextToken"] = next_token
        self.stub("pricing", "us-east-1").add_response("get_products", response, expected)

    def spot(
        self, region: str, types: list[str], start: datetime, items: list[dict[str, Any]]
    ) -> None:
        expected = {
            "InstanceTypes": types,
            "ProductDescriptions": ["Linux/UNIX"],
            "StartTime": start,
        }
        self.stub("ec2", region).add_response(
            "describe_spot_price_history", {"SpotPriceHistory": items}, expected
        )

    def error(self, service: str, region: str, method: str, code: str, status: int = 400) -> None:
        self.stub(service, region).add_client_error(
            method,
            service_error_code=code,
            service_message=f"{code} (test)",
            http_status_code=status,
        )

    def verify(self) -> None:
        for stubber in self.stubbers.values():
            stubber.assert_no_pending_responses()


ALL_TYPES = sorted(
    i["InstanceType"]
    for i in instance_type_items()
    if i.get("GpuInfo") or i.get("NeuronInfo") or i.get("InferenceAcceleratorInfo")
)


def _spot_items(region: str = "us-east-1") -> list[dict[str, Any]]:
    """The derived g5.xlarge history with Timestamp as boto3 returns it (datetime)."""
    items = copy.deepcopy(load("ec2_describe_spot_price_history_g5_xlarge_derived.json"))
    out = []
    for item in items["SpotPriceHistory"]:
        item["Timestamp"] = datetime.fromisoformat(item["Timestamp"])
        item["AvailabilityZone"] = item["AvailabilityZone"].replace("us-east-1", region)
        out.append(item)
    return out


def _price_list(*keys: str) -> list[str]:
    items = gpu_items()
    return [json.dumps(items[k]) for k in keys]


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    yield


# ----------------------------------------------------------------------------- full run


def _points(engine: Engine) -> dict[tuple[str, str, str], list[tuple[datetime, Decimal]]]:
    """Price intervals per (type, zone, pricing[:payment:class]), oldest first."""
    stmt = (
        select(
            Series.instance_type,
            Series.zone,
            Series.pricing,
            Series.payment_option,
            Series.offering_class,
            PricePoint.first_seen,
            PricePoint.price,
        )
        .join(PricePoint, PricePoint.series_id == Series.id)
        .order_by(PricePoint.first_seen)
    )
    out: dict[tuple[str, str, str], list[tuple[datetime, Decimal]]] = {}
    with engine.connect() as conn:
        for it, zone, pricing, payment, offering, first, price in conn.execute(stmt):
            label = f"{pricing}:{payment}:{offering}" if payment else pricing
            out.setdefault((it, zone, label), []).append((first, price))
    return out


def test_first_and_second_run_store_spot_per_zone_and_ask_only_for_new_points(
    sqlite_engine: Engine,
) -> None:
    settings = _settings()
    spot = _spot_items()
    newest = max(i["Timestamp"] for i in spot)
    older = [i for i in spot if i["Timestamp"] < datetime(2021, 2, 8, 12, tzinfo=UTC)]

    first = Harness(settings)
    first.instance_types("us-east-1")
    first.products("us-east-1", _price_list(f"p4d.24xlarge@{US}", f"g5.xlarge@{US}"), ALL_TYPES)
    types = ["g5.xlarge", "p4d.24xlarge"]
    first.spot("us-east-1", types, NOW - timedelta(days=7), older)
    summary = run_collector(sqlite_engine, first.collector, settings, now=NOW)
    first.verify()
    assert summary.status == "succeeded", summary.error
    assert summary.stats.offers_seen == 26 + len(older)
    points = _points(sqlite_engine)
    assert len(points[("p4d.24xlarge", "", "on_demand")]) == 1
    assert len([k for k in points if k[0] == "p4d.24xlarge" and k[2].startswith("reserved")]) == 12
    zone_f = points[("g5.xlarge", "us-east-1f", "spot")]
    # us-east-1f before 2021-02-08T12:00: 0.0432 (02-05 23:04), 0.0432 (02-06 23:04, same),
    # 0.0435 (02-07 00:37), 0.0435 (02-07 19:14, same) -> two intervals, at their own times.
    assert [t for t, _ in zone_f] == [
        datetime(2021, 2, 5, 23, 4, 19, tzinfo=UTC),
        datetime(2021, 2, 7, 0, 37, 17, tzinfo=UTC),
    ]

    # Second run: StartTime is the last stored spot point, not now - 7 days.
    last_stored = max(i["Timestamp"] for i in older)
    second = Harness(settings, clock=NOW + timedelta(hours=6))
    second.instance_types("us-east-1")
    second.products("us-east-1", _price_list(f"p4d.24xlarge@{US}", f"g5.xlarge@{US}"), ALL_TYPES)
    # AWS answers with the new points plus, per zone, the price in effect at StartTime.
    newer = [i for i in spot if i["Timestamp"] >= datetime(2021, 2, 8, 12, tzinfo=UTC)]
    boundary = [
        max((i for i in older if i["AvailabilityZone"] == z), key=lambda i: i["Timestamp"])
        for z in {i["AvailabilityZone"] for i in older}
    ]
    second.spot("us-east-1", types, last_stored, boundary + newer)
    summary = run_collector(sqlite_engine, second.collector, settings, now=NOW + timedelta(hours=6))
    second.verify()
    assert summary.status == "succeeded", summary.error
    assert summary.stats.delisted == 0  # zones without a change stay listed
    zone_f = _points(sqlite_engine)[("g5.xlarge", "us-east-1f", "spot")]
    assert zone_f[-1] == (newest, Decimal("0.457940"))
    assert [t for t, _ in zone_f][-3:] == [
        datetime(2021, 2, 8, 13, 20, 14, tzinfo=UTC),
        datetime(2021, 2, 8, 19, 30, 39, tzinfo=UTC),
        newest,
    ]


def test_spot_offers_carry_the_advisor_risk(sqlite_engine: Engine, make_ctx: MakeContext) -> None:
    settings = _settings()
    h = Harness(settings)
    h.instance_types("us-east-1")
    h.products("us-east-1", _price_list(f"g5.xlarge@{US}"), ALL_TYPES)
    h.spot("us-east-1", ["g5.xlarge"], NOW - timedelta(days=7), _spot_items()[:3])
    ctx = make_ctx(settings)
    offers = list(h.collector.collect(ctx))
    spot = [o for o in offers if o.pricing is PricingModel.SPOT]
    assert len(spot) == 3
    expected = ADVICE["us-east-1"]["g5.xlarge"]
    assert {o.attributes["interruption_bucket"] for o in spot} == {expected.interruption_bucket}
    assert {o.attributes["spot_savings_pct"] for o in spot} == {expected.spot_savings_pct}
    h.verify()


def test_malformed_items_are_counted_and_the_rest_of_the_page_is_stored(
    sqlite_engine: Engine,
) -> None:
    items = gpu_items()
    no_terms = copy.deepcopy(items[f"g4dn.xlarge@{US}"])
    del no_terms["terms"]
    non_usd = copy.deepcopy(items[f"g6f.large@{US}"])
    for kind in ("OnDemand", "Reserved"):
        for term in non_usd["terms"][kind].values():
            for dim in term["priceDimensions"].values():
                dim["pricePerUnit"] = {"CNY": dim["pricePerUnit"]["USD"]}
    zero = copy.deepcopy(items[f"p5.48xlarge@{US}"])
    for term in zero["terms"]["OnDemand"].values():
        for dim in term["priceDimensions"].values():
            dim["pricePerUnit"]["USD"] = "0.0000000000"
    unknown = load("pricing_get_products_pricelist_item_m5_large.json")  # no GPU
    page = [json.dumps(x) for x in (no_terms, non_usd, zero, unknown)]
    page.insert(2, json.dumps(items[f"p4d.24xlarge@{US}"]))
    page.append("{not json")

    settings = _settings(spot=False)
    h = Harness(settings)
    h.instance_types("us-east-1")
    h.products("us-east-1", page, ALL_TYPES)
    summary = run_collector(sqlite_engine, h.collector, settings, now=NOW)
    h.verify()
    assert summary.status == "succeeded", summary.error
    assert summary.skip_reasons == {
        "missing_terms": 1,
        "zero_price": 1,
        "unknown_gpu": 1,
        "bad_json": 1,
    }
    stored = _points(sqlite_engine)
    assert len([k for k in stored if k[0] == "p4d.24xlarge"]) == 13
    # a CNY item (AWS China) is stored in CNY: converted when read, never skipped
    assert len([k for k in stored if k[0] == "g6f.large"]) == 13
    assert len([k for k in stored if k[0] == "p5.48xlarge"]) == 12  # reserved still priced


def test_pages_are_followed(sqlite_engine: Engine, make_ctx: MakeContext) -> None:
    settings = _settings(spot=False)
    h = Harness(settings)
    h.instance_types("us-east-1")
    h.products("us-east-1", _price_list(f"g5.xlarge@{US}"), ALL_TYPES, next_token="page-2")
    expected = {
        "ServiceCode": "AmazonEC2",
        "Filters": price_list_filters("us-east-1", ",".join(ALL_TYPES)),
        "FormatVersion": "aws_v1",
        "MaxResults": 100,
        "NextToken": "page-2",
    }
    h.stub("pricing", "us-east-1").add_response(
        "get_products",
        {"FormatVersion": "aws_v1", "PriceList": _price_list(f"p5.48xlarge@{US}")},
        expected,
    )
    offers = list(h.collector.collect(make_ctx(settings)))
    h.verify()
    assert {o.instance_type for o in offers} == {"g5.xlarge", "p5.48xlarge"}


# ------------------------------------------------------------------- failing regions


@pytest.mark.parametrize(
    ("service", "method", "code"),
    [
        ("pricing", "get_products", "ThrottlingException"),
        ("ec2", "describe_instance_types", "RequestLimitExceeded"),
        ("ec2", "describe_instance_types", "AuthFailure"),
        ("ec2", "describe_instance_types", "OptInRequired"),
    ],
)
def test_a_failing_region_is_skipped_with_a_warning_and_the_rest_is_collected(
    service: str, method: str, code: str, caplog: pytest.LogCaptureFixture, make_ctx: MakeContext
) -> None:
    settings = _settings(regions=["ap-east-1", "us-east-1"], spot=False)
    h = Harness(settings)
    if service == "pricing":
        h.instance_types("ap-east-1")
        h.error("pricing", "us-east-1", method, code)
    else:
        h.error("ec2", "ap-east-1", method, code)
    h.instance_types("us-east-1")
    h.products("us-east-1", _price_list(f"g5.xlarge@{US}"), ALL_TYPES)
    ctx = make_ctx(settings)
    with caplog.at_level(logging.WARNING):
        offers = list(h.collector.collect(ctx))
    h.verify()
    assert len(offers) == 13 and {o.region for o in offers} == {"us-east-1"}
    assert list(ctx.partial) == ["ap-east-1"]
    assert code in ctx.partial["ap-east-1"]
    assert "skipping region ap-east-1" in caplog.text


def test_throttled_region_keeps_its_stored_offers_listed(sqlite_engine: Engine) -> None:
    settings = _settings(regions=["eu-west-1", "us-east-1"], spot=False)
    first = Harness(settings)
    first.instance_types("eu-west-1")
    first.products("eu-west-1", _price_list("g5.xlarge@EU (Ireland)"), ALL_TYPES)
    first.instance_types("us-east-1")
    first.products("us-east-1", _price_list(f"g5.xlarge@{US}"), ALL_TYPES)
    assert run_collector(sqlite_engine, first.collector, settings, now=NOW).status == "succeeded"

    second = Harness(settings)
    second.instance_types("eu-west-1")
    second.error("pricing", "us-east-1", "get_products", "ThrottlingException")
    second.instance_types("us-east-1")
    second.products("us-east-1", _price_list(f"g5.xlarge@{US}"), ALL_TYPES)
    summary = run_collector(sqlite_engine, second.collector, settings, now=NOW + timedelta(hours=1))
    assert summary.status == "succeeded", summary.error
    assert summary.stats.delisted == 0
    assert "eu-west-1" in summary.partial_regions


def test_every_region_failing_fails_the_run(sqlite_engine: Engine) -> None:
    settings = _settings(regions=["us-east-1"])
    h = Harness(settings)
    h.error("ec2", "us-east-1", "describe_instance_types", "UnauthorizedOperation", 403)
    summary = run_collector(sqlite_engine, h.collector, settings, now=NOW)
    assert summary.status == "failed"
    assert summary.error is not None and "every region failed" in summary.error


def test_default_regions_are_the_enabled_regions_that_have_gpus(make_ctx: MakeContext) -> None:
    settings = Settings(aws={"savings_plans": False, "capacity_blocks": False})
    assert settings.aws.regions == []
    h = Harness(settings)
    regions = {"Regions": [{"RegionName": "us-east-1"}, {"RegionName": "me-south-1"}]}
    h.stub("ec2", "us-east-1").add_response("describe_regions", regions, {})
    h.instance_types("me-south-1", [i for i in instance_type_items() if "GpuInfo" not in i][:1])
    h.instance_types("us-east-1")
    h.products("us-east-1", _price_list(f"g4dn.xlarge@{US}"), ALL_TYPES)
    h.spot("us-east-1", ["g4dn.xlarge"], NOW - timedelta(days=7), [])
    offers = list(h.collector.collect(make_ctx(settings)))
    h.verify()
    assert {o.region for o in offers} == {"us-east-1"}


def test_scope_spot_only_does_not_call_the_price_list(make_ctx: MakeContext) -> None:
    settings = _settings(spot_lookback_days=2)
    h = Harness(settings)
    h.instance_types("us-east-1")
    h.spot("us-east-1", ALL_TYPES, NOW - timedelta(days=2), _spot_items()[:2])
    ctx = make_ctx(settings, scope=frozenset({PricingModel.SPOT}))
    offers = list(h.collector.collect(ctx))
    h.verify()  # an unexpected get_products call would have raised
    assert {o.pricing for o in offers} == {PricingModel.SPOT}


def test_a_spot_only_run_asks_ec2_for_spot_history_from_the_last_stored_point(
    make_ctx: MakeContext,
) -> None:
    """The service's spot job: instance types and spot history only, from where the
    store left off; the Price List (stubbed with no answers) is never called."""
    settings = _settings()
    h = Harness(settings)
    h.stub("pricing", "us-east-1")  # any get_products call would fail the run
    h.instance_types("us-east-1")
    last = datetime(2021, 2, 9, 1, 0, tzinfo=UTC)
    h.spot("us-east-1", ALL_TYPES, last, _spot_items()[:2])
    ctx = make_ctx(
        settings,
        scope=frozenset({PricingModel.SPOT}),
        last_observed={(PricingModel.SPOT, "us-east-1"): last},
    )
    offers = list(h.collector.collect(ctx))
    h.verify()
    assert h.calls == ["ec2:DescribeInstanceTypes", "ec2:DescribeSpotPriceHistory"]
    assert len(offers) == 2 and {o.pricing for o in offers} == {PricingModel.SPOT}
    assert not ctx.skips and ctx.partial == {}


def test_long_type_lists_are_split_within_the_filter_limit() -> None:
    types = [f"g{n}.48xlarge" for n in range(200)]
    chunks = instance_type_filters(types)
    assert len(chunks) > 1
    assert all(len(c) <= 1024 for c in chunks)
    assert sorted(",".join(chunks).split(",")) == sorted(types)


# ------------------------------------------------------- credentials, config, endpoints


def test_missing_credentials_run_aws_from_the_bulk_files() -> None:
    # tests/conftest.py clears AWS_* credentials, points the config files at nothing
    # and disables the instance metadata service, so the chain finds nothing: the
    # collector reads the public bulk offer files instead (tests/collectors/test_aws_bulk.py).
    collector = AwsCollector.from_settings(Settings())
    assert collector.bulk is not None
    status = {s.name: s for s in registry.status(Settings())}
    assert status["aws"].configured is True
    assert (
        "spot, savings plans, capacity blocks and EBS/egress need credentials"
        in status["aws"].reason
    )


def test_with_credentials_there_is_no_bulk_source(aws_env: None) -> None:
    collector = AwsCollector.from_settings(Settings())
    assert collector.bulk is None and collector.readiness == ""


def test_disabled_aws_is_not_configured(aws_env: None) -> None:
    with pytest.raises(NotConfigured, match=r"aws\.enabled"):
        AwsCollector.from_settings(Settings(aws={"enabled": False}))


def test_credentials_from_the_environment_are_enough(aws_env: None) -> None:
    assert isinstance(AwsCollector.from_settings(Settings()), AwsCollector)


def test_clients_use_adaptive_retries(aws_env: None) -> None:
    collector = AwsCollector.from_settings(Settings(aws={"max_attempts": 5}))
    client = collector.client("ec2", "eu-west-1")
    retries = client.meta.config.retries
    assert retries["mode"] == "adaptive"
    assert retries["total_max_attempts"] == 5


def test_boto3_endpoint_environment_variables_keep_working(
    aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", "http://127.0.0.1:4566")
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:4567")
    collector = AwsCollector.from_settings(Settings())
    assert collector.client("pricing", "us-east-1").meta.endpoint_url == "http://127.0.0.1:4566"
    assert collector.client("ec2", "us-west-2").meta.endpoint_url == "http://127.0.0.1:4567"


def test_configured_endpoints_win(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:4567")
    monkeypatch.setenv("GPU_TRACKER_AWS__PRICING_ENDPOINT_URL", "http://pricing.vpce.local")
    monkeypatch.setenv("GPU_TRACKER_AWS__EC2_ENDPOINT_URL", "http://ec2.vpce.local")
    collector = AwsCollector.from_settings(Settings())
    assert collector.client("pricing", "us-east-1").meta.endpoint_url == "http://pricing.vpce.local"
    assert collector.client("ec2", "us-east-1").meta.endpoint_url == "http://ec2.vpce.local"


def test_regions_and_advisor_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_TRACKER_AWS__REGIONS", "us-east-1, eu-west-1 ,ap-south-1")
    monkeypatch.setenv("GPU_TRACKER_AWS__SPOT_ADVISOR_URL", "http://mirror.local/advisor.json")
    settings = Settings()
    assert settings.aws.regions == ["us-east-1", "eu-west-1", "ap-south-1"]
    assert settings.aws.spot_advisor_url == "http://mirror.local/advisor.json"


def test_collector_error_is_raised_when_regions_cannot_be_listed(make_ctx: MakeContext) -> None:
    h = Harness(Settings())
    h.error("ec2", "us-east-1", "describe_regions", "UnauthorizedOperation", 403)
    with pytest.raises(CollectorError, match="GPU_TRACKER_AWS__REGIONS"):
        list(h.collector.collect(make_ctx(Settings())))


# ------------------------------------------- real retries against a local HTTP endpoint


class _PricingServer:
    """A local stand-in for the Price List endpoint: throttles ``throttle`` times, then answers.

    It speaks the JSON 1.1 protocol boto3 uses for ``pricing`` (POST, ``X-Amz-Target``).
    """

    def __init__(self, page: dict[str, Any], throttle: int) -> None:
        self.calls: list[str] = []
        json11 = {"Content-Type": "application/x-amz-json-1.1"}

        def respond(path: str, headers: Mapping[str, str], body: bytes) -> Answer:
            self.calls.append(headers.get("X-Amz-Target", ""))
            if len(self.calls) <= throttle:
                return 400, json11, {"__type": "ThrottlingException", "message": "Rate exceeded"}
            return 200, json11, page

        self._server = LocalAwsServer(respond)
        self.url = self._server.url

    def close(self) -> None:
        self._server.close()


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep botocore's retry decisions but not its sleeping (backoff is up to 20 s, and
    adaptive mode's client-side rate limiter waits seconds for tokens after a throttle)."""
    from botocore.retries import bucket, standard

    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", lambda self, ctx: 0)
    monkeypatch.setattr(bucket.TokenBucket, "acquire", lambda self, amount=1, block=True: True)


@pytest.mark.parametrize(("throttle", "recovers"), [(2, True), (3, False)])
def test_throttling_is_retried_then_the_region_is_skipped(
    throttle: int,
    recovers: bool,
    no_backoff: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    make_ctx: MakeContext,
) -> None:
    page = {"FormatVersion": "aws_v1", "PriceList": _price_list(f"g5.xlarge@{US}")}
    server = _PricingServer(page, throttle=throttle)
    try:
        # boto3's own variable: the collector must not override it with a fixed endpoint.
        monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", server.url)
        settings = _settings(spot=False, max_attempts=3)
        h = Harness(settings)
        h.instance_types("us-east-1")
        ctx = make_ctx(settings)
        with caplog.at_level(logging.WARNING):
            if recovers:
                offers = list(h.collector.collect(ctx))
            else:
                with pytest.raises(CollectorError, match="every region failed"):
                    list(h.collector.collect(ctx))
                offers = []
    finally:
        server.close()
    assert server.calls == ["AWSPriceListService.GetProducts"] * 3
    if recovers:
        assert len(offers) == 13 and ctx.partial == {}
    else:
        assert "throttled by AWS after retries" in ctx.partial["us-east-1"]
        assert "skipping region us-east-1" in caplog.text
