"""The Tencent collector end to end: the official SDK signs and sends every request to a
real HTTP server on 127.0.0.1 (tests/collectors/tencent_server.py) that verifies the
TC3-HMAC-SHA256 signature and answers recorded responses (tests/fixtures/tencent/)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import CollectorError, MissingCredentials, NotConfigured
from collectors.tencent import TencentCollector
from collectors.tencent_sdk import endpoint_profile
from tests.collectors.conftest import MakeContext
from tests.collectors.tencent_server import SECRET_ID, SECRET_KEY, TencentServer, fixture
from tracker.models import PricingModel
from tracker.redact import redact, secrets_of
from tracker.settings import Settings

ZONES = "DescribeZoneInstanceConfigInfos"
GZ = "ap-guangzhou"
PAGES = {
    "POSTPAID_BY_HOUR": "zone_configs_postpaid_ap-guangzhou_derived.json",
    "SPOTPAID": "zone_configs_spotpaid_ap-guangzhou_derived.json",
    "PREPAID": "zone_configs_prepaid_ap-guangzhou_derived.json",
}
THROTTLED = "error_request_limit_exceeded_derived.json"


@pytest.fixture
def server() -> Iterator[TencentServer]:
    srv = TencentServer()
    srv.url = srv.start()  # type: ignore[attr-defined]
    try:
        yield srv
    finally:
        srv.stop()
    assert srv.bad_signatures == [], "a request reached the server without a valid signature"


def _answer_guangzhou(server: TencentServer) -> None:
    for charge, name in PAGES.items():
        server.answer(ZONES, GZ, charge, fixture(name))


def _settings(server: TencentServer, **tencent: Any) -> Settings:
    tencent = {"endpoint_url": server.url, "regions": [GZ], **tencent}  # type: ignore[attr-defined]
    return Settings(http={"max_retries": 2}, tencent=tencent)


def _collector(settings: Settings, secret_key: str = SECRET_KEY) -> TencentCollector:
    return TencentCollector(settings, SECRET_ID, secret_key, backoff=lambda attempt: 0)


def test_collects_every_pricing_model_through_the_signed_sdk(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    _answer_guangzhou(server)
    settings = _settings(server)
    ctx = make_ctx(settings)
    offers = list(_collector(settings).collect(ctx))

    # One call per charge type, each signed by the SDK (the server verified every one).
    assert [(c.action, c.region, c.charge_type) for c in server.calls] == [
        (ZONES, GZ, "POSTPAID_BY_HOUR"),
        (ZONES, GZ, "SPOTPAID"),
        (ZONES, GZ, "PREPAID"),
    ]
    assert all(c.authorization.startswith("TC3-HMAC-SHA256 Credential=") for c in server.calls)
    # 4 pay-as-you-go + 1 spot + 3 prepaid (GN7 1y and 3y, GT4 1y): see test_tencent_parse.
    by_model: dict[PricingModel, int] = {}
    for offer in offers:
        by_model[offer.pricing] = by_model.get(offer.pricing, 0) + 1
    assert by_model == {
        PricingModel.ON_DEMAND: 4,
        PricingModel.SPOT: 1,
        PricingModel.RESERVED_1Y: 2,
        PricingModel.RESERVED_3Y: 1,
    }
    assert dict(ctx.skips) == {"zero_price": 1, "unknown_gpu_family": 1}
    assert ctx.partial == {}
    reserved = next(
        o
        for o in offers
        if o.pricing is PricingModel.RESERVED_1Y and o.instance_type == "GT4.4XLARGE96"
    )
    # 150000 CNY for one year / 8760 h; the SDK's float went through repr, not binary.
    assert reserved.price_per_hour == Decimal("17.1232876712")
    assert (reserved.gpu_model, reserved.zone, reserved.region) == (
        "A100-40GB",
        "ap-guangzhou-6",
        GZ,
    )


def test_a_spot_only_run_asks_for_spot_items_only(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    _answer_guangzhou(server)
    settings = _settings(server)
    ctx = make_ctx(settings, scope=frozenset({PricingModel.SPOT}))
    offers = list(_collector(settings).collect(ctx))
    assert [c.charge_type for c in server.calls] == ["SPOTPAID"]
    assert [(o.instance_type, o.pricing) for o in offers] == [("GN7.2XLARGE32", PricingModel.SPOT)]


def test_regions_come_from_describe_regions_and_unknown_ones_are_one_line_partials(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    server.answer("DescribeRegions", "", "", fixture("describe_regions_docs_example.json"))
    _answer_guangzhou(server)
    settings = _settings(server, regions=[])
    ctx = make_ctx(settings)
    offers = list(_collector(settings).collect(ctx))
    assert server.calls[0].action == "DescribeRegions"
    assert {o.region for o in offers} == {GZ}
    # The other eight AVAILABLE regions of the docs example get the server's
    # UnsupportedRegion envelope: each is left partial (not delisted) with one line.
    assert sorted(ctx.partial) == [
        "ap-beijing",
        "ap-hongkong",
        "ap-shanghai",
        "ap-shanghai-fsi",
        "ap-shenzhen-fsi",
        "ap-singapore",
        "na-siliconvalley",
        "na-toronto",
    ]
    reason = ctx.partial["ap-singapore"]
    assert reason == (
        "UnsupportedRegion: Unsupported region. (is 'ap-singapore' a Tencent Cloud region? "
        "see GPU_TRACKER_TENCENT__REGIONS)"
    )


def test_invalid_parameter_value_for_a_region_is_one_partial_line(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    # The docs' error envelope with the common code InvalidParameterValue and its
    # table text (changed here, not a recorded answer).
    envelope = fixture("error_auth_failure_signature_docs_example.json")
    envelope["Response"]["Error"] = {
        "Code": "InvalidParameterValue",
        "Message": "Invalid parameter value.",
    }
    server.answer(ZONES, "ap-typo", "SPOTPAID", envelope)
    server.answer(ZONES, GZ, "SPOTPAID", fixture(PAGES["SPOTPAID"]))
    settings = _settings(server, regions=["ap-typo", GZ])
    ctx = make_ctx(settings, scope=frozenset({PricingModel.SPOT}))
    offers = list(_collector(settings).collect(ctx))
    assert len(server.calls) == 2  # not retried
    assert ctx.partial == {
        "ap-typo": "InvalidParameterValue: Invalid parameter value. (is 'ap-typo' a Tencent "
        "Cloud region? see GPU_TRACKER_TENCENT__REGIONS)"
    }
    assert {o.region for o in offers} == {GZ}


def test_an_unknown_only_region_fails_the_run_with_one_line(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    settings = _settings(server, regions=["ap-nowhere"])
    with pytest.raises(CollectorError) as caught:
        list(_collector(settings).collect(make_ctx(settings)))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        "tencent: every region failed (1); first: ap-nowhere: UnsupportedRegion"
    )


def test_throttling_is_retried_by_the_sdk_then_succeeds(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    throttled = fixture(THROTTLED)
    server.answer(ZONES, GZ, "SPOTPAID", throttled, throttled, fixture(PAGES["SPOTPAID"]))
    settings = _settings(server)  # max_retries 2: three attempts
    ctx = make_ctx(settings, scope=frozenset({PricingModel.SPOT}))
    offers = list(_collector(settings).collect(ctx))
    assert len(server.calls) == 3
    assert len(offers) == 1
    assert ctx.partial == {}


def test_throttling_that_outlasts_the_retries_leaves_the_region_partial(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    server.answer(ZONES, GZ, "SPOTPAID", fixture(THROTTLED))  # repeats forever
    server.answer(ZONES, "ap-shanghai", "SPOTPAID", fixture(PAGES["SPOTPAID"]))
    settings = _settings(server, regions=[GZ, "ap-shanghai"])
    ctx = make_ctx(settings, scope=frozenset({PricingModel.SPOT}))
    offers = list(_collector(settings).collect(ctx))
    assert [c.region for c in server.calls] == [GZ, GZ, GZ, "ap-shanghai"]
    assert ctx.partial == {GZ: "RequestLimitExceeded: The request rate limit is exceeded."}
    assert {o.region for o in offers} == {"ap-shanghai"}


def test_refused_credentials_stop_the_run_with_one_line_naming_the_variables(
    server: TencentServer, make_ctx: MakeContext
) -> None:
    _answer_guangzhou(server)
    settings = _settings(server)
    wrong = "wrongTencentSecretKey000000000001"
    with pytest.raises(CollectorError) as caught:
        list(_collector(settings, secret_key=wrong).collect(make_ctx(settings)))
    assert str(caught.value) == (
        "tencent: credentials refused (AuthFailure.SignatureFailure: The provided credentials "
        "could not be validated. Please check your signature is correct.); check "
        "TENCENTCLOUD_SECRET_ID / TENCENTCLOUD_SECRET_KEY"
    )
    assert len(server.calls) == 1  # not retried, and no other region or charge type tried
    server.bad_signatures.clear()  # this test sent a bad one on purpose


def test_missing_credentials_skip_the_provider_naming_both_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TENCENTCLOUD_SECRET_ID", raising=False)
    monkeypatch.delenv("TENCENTCLOUD_SECRET_KEY", raising=False)
    with pytest.raises(MissingCredentials) as caught:
        TencentCollector.from_settings(Settings())
    assert "TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY" in str(caught.value)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", SECRET_ID)  # half a pair is no pair
    with pytest.raises(MissingCredentials):
        TencentCollector.from_settings(Settings())
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", SECRET_KEY)
    assert isinstance(TencentCollector.from_settings(Settings()), TencentCollector)
    with pytest.raises(NotConfigured):
        TencentCollector.from_settings(Settings(tencent={"enabled": False}))


def test_secret_key_file_wins_over_the_environment(
    server: TencentServer, make_ctx: MakeContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", "wrongTencentSecretKey000000000001")
    key_file = tmp_path / "key"
    key_file.write_text(SECRET_KEY + "\n")
    _answer_guangzhou(server)
    settings = _settings(server, secret_id=SECRET_ID, secret_key_file=str(key_file))
    collector = TencentCollector.from_settings(settings)
    collector._backoff = lambda attempt: 0
    ctx = make_ctx(settings, scope=frozenset({PricingModel.SPOT}))
    assert len(list(collector.collect(ctx))) == 1  # signed with the file's key


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_TRACKER_TENCENT__SITE", "international")
    monkeypatch.setenv("GPU_TRACKER_TENCENT__ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("GPU_TRACKER_TENCENT__REGIONS", "ap-guangzhou, ap-singapore")
    tencent = Settings().tencent
    assert (tencent.site, tencent.currency) == ("international", "USD")
    assert tencent.endpoint_url == "http://127.0.0.1:9"
    assert tencent.regions == ["ap-guangzhou", "ap-singapore"]
    profile = endpoint_profile(Settings())
    assert (profile.scheme, profile.endpoint) == ("http", "127.0.0.1:9")


def test_the_site_picks_the_default_endpoint_and_currency() -> None:
    china = Settings()
    assert china.tencent.currency == "CNY"
    assert endpoint_profile(china).endpoint is None  # the SDK's cvm.tencentcloudapi.com
    intl = Settings(tencent={"site": "international"})
    profile = endpoint_profile(intl)
    assert (profile.scheme, profile.endpoint) == ("https", "cvm.intl.tencentcloudapi.com")
    with pytest.raises(ValueError):
        Settings(tencent={"site": "mars"})
    with pytest.raises(ValueError):
        Settings(tencent={"endpoint_url": "http://127.0.0.1:9/v3"})


def test_credentials_from_the_environment_are_masked_in_text() -> None:
    environ = {"TENCENTCLOUD_SECRET_ID": SECRET_ID, "TENCENTCLOUD_SECRET_KEY": SECRET_KEY}
    line = redact(
        f"Credential={SECRET_ID}/2026-11-30/cvm key={SECRET_KEY}", secrets_of(None, environ)
    )
    assert SECRET_ID not in line and SECRET_KEY not in line
    settings = Settings(tencent={"secret_id": SECRET_ID, "secret_key": SECRET_KEY})
    assert {SECRET_ID, SECRET_KEY} <= set(secrets_of(settings, {}))


def test_an_unreachable_endpoint_fails_the_run_with_one_line(make_ctx: MakeContext) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = Settings(
        http={"max_retries": 1, "timeout_seconds": 5},
        tencent={"endpoint_url": f"http://127.0.0.1:{port}", "regions": [GZ]},
    )
    with pytest.raises(CollectorError) as caught:
        list(_collector(settings).collect(make_ctx(settings)))
    message = str(caught.value)
    assert message.startswith(
        "tencent: every region failed (1); first: ap-guangzhou: ClientNetworkError"
    )
    assert "\n" not in message


def test_the_retryer_fixes_the_sdks_stale_error_after_a_throttled_attempt() -> None:
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import (
        TencentCloudSDKException,
    )
    from tencentcloud.common.retry import StandardRetryer

    from collectors.tencent_sdk import Retryer

    def throttled_once() -> Any:
        calls: list[int] = []

        def call() -> Any:
            calls.append(1)
            if len(calls) == 1:
                raise TencentCloudSDKException("RequestLimitExceeded", "slow down")
            return "ok"

        return call

    # The SDK's own policy ends with the first attempt's error although the second
    # succeeded (tencentcloud-sdk-python-common 3.1.195). When this stops failing, the
    # SDK is fixed and collectors/tencent_sdk.py's Retryer can go.
    with pytest.raises(TencentCloudSDKException):
        StandardRetryer(max_attempts=3, backoff_fn=lambda n: 0).send_request(throttled_once())
    assert Retryer(max_attempts=3, backoff_fn=lambda n: 0).send_request(throttled_once()) == "ok"


def test_tencent_is_registered_like_every_collector() -> None:
    from importlib.metadata import entry_points

    from tracker import registry

    (ep,) = [e for e in entry_points(group="gpu_tracker.collectors") if e.name == "tencent"]
    assert ep.load() is TencentCollector
    assert registry.enabled(Settings(), "tencent")
    assert not registry.enabled(Settings(tencent={"enabled": False}), "tencent")
