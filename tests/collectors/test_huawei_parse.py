"""Pure parts of the Huawei collector: flavors, rating responses, offers, settings.

Payloads are the recorded ones of tests/fixtures/huawei/ (SOURCES.md there); expected
values are worked out by hand in the comments.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from collectors.base import SkipItem
from collectors.huawei import build_offer
from collectors.huawei_flavors import FlavorHardware, parse_flavor, sold_charging_modes
from collectors.huawei_ratings import (
    Rating,
    RatingError,
    on_demand_products,
    parse_on_demand,
    parse_period,
    period_products,
)
from collectors.huawei_sdk import describe_error
from tracker.catalog import resolve_gpu
from tracker.models import PricingModel
from tracker.settings import Settings
from tracker.settings.huawei import HuaweiSettings

from .huawei_server import load


def specs(**extra: str) -> dict[str, Any]:
    flavor = load("ecs_list_flavors_docs_example.json")["flavors"][0]
    return {**flavor, "os_extra_specs": {**flavor["os_extra_specs"], **extra}}


def test_the_docs_example_flavor_has_no_gpu_and_is_not_the_market() -> None:
    (flavor,) = load("ecs_list_flavors_docs_example.json")["flavors"]
    assert parse_flavor(flavor) is None  # c3.2xlarge.2, computingv3


def test_gpu_text_gives_model_count_and_memory_per_card() -> None:
    hw = parse_flavor(specs(**{"info:gpu:name": "2 * NVIDIA T4 / 2 * 16G"}))
    assert hw is not None
    assert (hw.gpu_name, hw.gpu_count, hw.vram_gib) == ("NVIDIA T4", 2, 16)
    assert (hw.flavor, hw.vcpus, hw.memory_gib) == ("c3.2xlarge.2", 8, 16)  # "8"; 16384 MiB


def test_a_count_only_in_the_pci_alias_is_used() -> None:
    hw = parse_flavor(
        specs(**{"info:ascend:name": "HUAWEI Ascend 310", "pci_passthrough:alias": "ascend-310:4"})
    )
    assert hw is not None and (hw.gpu_name, hw.gpu_count, hw.vram_gib) == (
        "HUAWEI Ascend 310",
        4,
        None,
    )


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({"info:gpu:name": "1 * NVIDIA M60-2Q / 2G"}, "vgpu_profile"),
        ({"info:gpu:name": "2 * NVIDIA T4 / 1 * 16G"}, "unreadable_gpu_info"),
        ({"info:gpu:name": "NVIDIA T4"}, "unreadable_gpu_info"),  # no count anywhere
        ({"ecs:performancetype": "gpu"}, "no_gpu_info"),
    ],
)
def test_gpu_flavors_that_cannot_be_read_are_counted_skips(
    extra: dict[str, str], reason: str
) -> None:
    with pytest.raises(SkipItem) as exc:
        parse_flavor(specs(**extra))
    assert exc.value.reason == reason


def test_off_sale_flavors_are_dropped_and_zone_status_wins() -> None:
    gpu = {"info:gpu:name": "1 * NVIDIA T4 / 1 * 16G"}
    assert parse_flavor(specs(**gpu, **{"cond:operation:status": "abandon"})) is None
    kept = parse_flavor(
        specs(
            **gpu, **{"cond:operation:status": "abandon", "cond:operation:az": "cn-east-2a(normal)"}
        )
    )
    assert kept is not None and kept.operation_status == "abandon"


def test_charging_modes_follow_cond_operation_charge() -> None:
    assert sold_charging_modes(specs()) == {"demand", "period"}
    assert sold_charging_modes(specs(**{"cond:operation:charge": "demand"})) == {"demand"}


@pytest.mark.parametrize(
    ("raw", "memory", "canonical"),
    [
        ("NVIDIA P100", 16, "P100"),
        ("NVIDIA T4", 16, "T4"),
        ("NVIDIA V100", 16, "V100-16GB"),
        ("NVIDIA V100", 32, "V100-32GB"),
        ("NVIDIA A100", 80, "A100-80GB"),
        ("NVIDIA P4", 8, "P4"),
    ],
)
def test_huawei_gpu_spellings_resolve_in_the_catalog(raw: str, memory: int, canonical: str) -> None:
    match = resolve_gpu(raw, memory)
    assert match.known and match.name == canonical


def test_rating_requests_name_linux_specs_and_hours_or_years() -> None:
    (od,) = on_demand_products("cn-north-4", ["p2s.2xlarge.8"])
    assert od == {
        "id": "1",
        "cloud_service_type": "hws.service.type.ec2",
        "resource_type": "hws.resource.type.vm",
        "resource_spec": "p2s.2xlarge.8.linux",
        "region": "cn-north-4",
        "usage_factor": "Duration",
        "usage_value": 1,
        "usage_measure_id": 4,
        "subscription_num": 1,
    }
    (y3,) = period_products("cn-north-4", ["p2s.2xlarge.8"], 3)
    assert (y3["period_type"], y3["period_num"]) == (3, 3)  # 3 = year


def test_the_docs_period_example_has_only_a_list_price_which_is_paid() -> None:
    ratings = parse_period(load("bss_list_rate_on_period_detail_docs_example.json"))
    assert ratings == {"1": Rating(Decimal("32.2"), Decimal("32.2"), "CNY")}


def test_the_best_offer_is_the_period_price() -> None:
    ratings = parse_period(load("bss_list_rate_on_period_detail_1y_gpu_edited.json"))
    assert ratings["1"].amount == Decimal("11212.8") and ratings["1"].list_amount == Decimal(
        "14016"
    )
    assert ratings["1"].discount_name == "Commercial discount"


def test_measure_ids_scale_amounts_and_unknown_ones_fail() -> None:
    body = load("bss_list_on_demand_resource_ratings_gpu_edited.json")
    body["product_rating_results"][0]["measure_id"] = 3  # fen: 3.20 fen = 0.032 yuan
    assert parse_on_demand(body)["1"].amount == Decimal("0.0320")
    body["product_rating_results"][0]["measure_id"] = 9
    with pytest.raises(RatingError, match="measure_id"):
        parse_on_demand(body)


def test_a_response_without_currency_is_refused() -> None:
    body = load("bss_list_on_demand_resource_ratings_gpu_edited.json")
    del body["currency"]
    with pytest.raises(RatingError, match="currency"):
        parse_on_demand(body)


HW = FlavorHardware(
    "pi2.2xlarge.4",
    "NVIDIA T4",
    Decimal(1),
    Decimal(16),
    Decimal(8),
    Decimal(32),
    "gpu",
    "pi2",
    "normal",
)


def test_a_three_year_term_is_divided_by_26280_hours() -> None:
    offer = build_offer(
        HW, "cn-north-4", PricingModel.RESERVED_3Y, Rating(Decimal("26280"), None, "CNY")
    )
    # 26280 CNY / (3 × 8760 h) = 1 CNY/h, kept in CNY (no USD figure stored)
    assert (offer.price_per_hour, offer.currency) == (Decimal(1), "CNY")
    assert offer.price_per_hour_usd is None
    assert offer.attributes["term_price"] == Decimal("26280")


def test_settings_read_the_sdk_variables_and_files(tmp_path: Path) -> None:
    section = HuaweiSettings()
    assert section.credentials({}) is None
    assert section.credentials({"HUAWEICLOUD_SDK_AK": "a"}) is None  # both are needed
    ak, sk = section.credentials({"HUAWEICLOUD_SDK_AK": "a", "HUAWEICLOUD_SDK_SK": "s"}) or ("", "")
    assert (ak.get_secret_value(), sk.get_secret_value()) == ("a", "s")
    (tmp_path / "sk").write_text("from-file\n")
    filed = HuaweiSettings(ak="x", sk_file=tmp_path / "sk").credentials({})
    assert filed is not None and filed[1].get_secret_value() == "from-file"
    assert HuaweiSettings().resolved_regions() == ["cn-north-4", "cn-east-3", "cn-south-1"]
    assert HuaweiSettings(site="international", regions="ap-southeast-1").resolved_regions() == [
        "ap-southeast-1"
    ]


def test_endpoint_overrides_take_http_host_port_and_refuse_paths() -> None:
    assert (
        HuaweiSettings(ecs_endpoint_url="http://127.0.0.1:8080/").ecs_endpoint_url
        == "http://127.0.0.1:8080"
    )
    with pytest.raises(ValidationError):
        HuaweiSettings(bss_endpoint_url="http://gw:8080/v2/bills")


def test_sdk_errors_become_one_line() -> None:
    from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException, SdkError

    error = ClientRequestException(
        400, SdkError("req-1", "CBC.0100", "Invalid parameter.\nproduct_infos")
    )
    line = str(describe_error(error, "region cn-north-4: ListOnDemandResourceRatings"))
    assert line == (
        "huawei: region cn-north-4: ListOnDemandResourceRatings: CBC.0100 Invalid parameter. "
        "product_infos [HTTP 400, request req-1]"
    )


def test_an_auth_error_wrapped_by_the_sdks_iam_lookup_is_unwrapped() -> None:
    from huaweicloudsdkcore.exceptions.exceptions import SdkException

    wrapped = SdkException(
        "Failed to get domain id, ClientRequestException - {status_code:401,request_id:r1,"
        "error_code:APIGW.0301,error_msg:Incorrect IAM authentication information: verify aksk "
        "signature fail,encoded_authorization_message:None }"
    )
    error = describe_error(wrapped, "billing account lookup")
    assert error.auth
    assert str(error) == (
        "huawei: billing account lookup: Failed to get domain id: APIGW.0301 Incorrect IAM "
        "authentication information: verify aksk signature fail "
        "(check HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK) [HTTP 401]"
    )


def test_the_sdk_credential_variables_are_masked_like_aws_keys() -> None:
    from tracker.redact import environment_secrets

    found = environment_secrets({"HUAWEICLOUD_SDK_AK": "AKID123", "HUAWEICLOUD_SDK_SK": "sk-456"})
    assert found == {"AKID123", "sk-456"}


def test_enabled_false_switches_huawei_off() -> None:
    from collectors.base import NotConfigured
    from collectors.huawei import HuaweiCollector
    from tracker import registry

    off = Settings.model_validate({"huawei": {"enabled": False, "ak": "a", "sk": "s"}})
    assert registry.enabled(Settings(), "huawei") and not registry.enabled(off, "huawei")
    with pytest.raises(NotConfigured):
        HuaweiCollector.from_settings(off)


def test_listing_the_collector_does_not_import_huaweis_sdk() -> None:
    """Every CLI command loads the collectors; Huawei's SDK takes seconds to import."""
    import subprocess
    import sys

    code = "import sys, collectors.huawei; print(any(m.startswith('huaweicloudsdk') for m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
