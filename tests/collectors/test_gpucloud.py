"""Settings and helpers the GPU-cloud collectors share (endpoint overrides, keys)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.base import SkipItem
from collectors.gpucloud import decimal_text, documented_url, loose_number, where_listed
from tracker.models import Availability, PricingModel
from tracker.settings import ConfigError, Settings, load_settings


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        (None, "https://api.runpod.io/graphql"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/graphql"),
        ("https://gw.example.com", "https://gw.example.com/graphql"),
    ],
)
def test_override_replaces_origin_and_keeps_the_documented_path(
    origin: str | None, expected: str
) -> None:
    assert documented_url("https://api.runpod.io/graphql", origin) == expected


@pytest.mark.parametrize(
    "section",
    [
        "lambda",
        "runpod",
        "vastai",
        "oci",
        "digitalocean",
        "verda",
        "tensordock",
        "vultr",
        "cudo",
        "hotaisle",
        "jarvislabs",
        "seeweb",
        "nebius",
        "cloudrift",
    ],
)
def test_endpoint_override_from_the_environment(
    section: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(f"GPU_TRACKER_{section.upper()}__ENDPOINT_URL", "http://localhost:9000/")
    settings = load_settings()
    value = getattr(settings, "lambda_" if section == "lambda" else section).endpoint_url
    assert value == "http://localhost:9000"


def test_endpoint_with_a_path_is_a_one_line_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GPU_TRACKER_OCI__ENDPOINT_URL", "http://proxy:8080/pls/apex")
    with pytest.raises(ConfigError, match=r"oci\.endpoint_url: .*without a path"):
        load_settings()


def test_lambda_section_from_toml_and_only_the_prefixed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "tracker.toml"
    config.write_text('[lambda]\nenabled = false\nendpoint_url = "http://10.1.1.1:81"\n')
    settings = load_settings(config)
    assert not settings.lambda_.enabled
    assert settings.lambda_.endpoint_url == "http://10.1.1.1:81"
    # A bare LAMBDA__API_KEY is not ours; GPU_TRACKER_LAMBDA__API_KEY is.
    monkeypatch.setenv("LAMBDA__API_KEY", "not-ours")
    assert Settings().lambda_.api_key is None
    # a value no setting's name or default contains ("ours" is in "capacity_block_hours")
    monkeypatch.setenv("GPU_TRACKER_LAMBDA__API_KEY", "ours-7Qx2")
    key = Settings().lambda_.api_key
    assert key is not None and key.get_secret_value() == "ours-7Qx2"
    assert "ours-7Qx2" not in repr(Settings())


def test_api_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "runpod_key"
    secret.write_text("from-file\n")
    monkeypatch.setenv("GPU_TRACKER_RUNPOD__API_KEY_FILE", str(secret))
    monkeypatch.setenv("RUNPOD_API_KEY", "conventional")
    key = Settings().runpod.resolved_api_key()
    assert key is not None and key.get_secret_value() == "from-file"


def test_service_gives_a_spot_job_only_where_spot_is_its_own_request() -> None:
    from collectors.lambda_cloud import LambdaCollector
    from collectors.oci import OciCollector
    from collectors.runpod import RunPodCollector
    from collectors.vastai import VastAiCollector
    from tracker.service.jobs import plan_jobs
    from tracker.settings import SchedulerSettings

    collectors = {
        "lambda": LambdaCollector,
        "runpod": RunPodCollector,
        "vastai": VastAiCollector,
        "oci": OciCollector,
    }
    jobs = {job.id: job for job in plan_jobs(collectors, SchedulerSettings())}
    # Vast's bids are a separate search; RunPod and OCI return spot with everything else.
    assert sorted(jobs) == [
        "lambda:standard",
        "oci:standard",
        "runpod:standard",
        "vastai:spot",
        "vastai:standard",
    ]
    assert jobs["vastai:spot"].pricing_scope == {PricingModel.SPOT}
    assert PricingModel.SPOT in jobs["runpod:standard"].pricing_scope


def test_where_listed_keeps_a_region_listed_before_as_unavailable() -> None:
    assert where_listed(["nyc1"], {"nyc1", "tor1"}) == {
        "nyc1": Availability.AVAILABLE,
        "tor1": Availability.UNAVAILABLE,
    }
    assert where_listed([]) == {}


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3.95", Decimal("3.95")), (" 0.70 ", Decimal("0.70")), (None, None)],
)
def test_decimal_text_reads_decimal_strings_exactly(value: Any, expected: Any) -> None:
    assert decimal_text({"p": value}, "p") == expected


@pytest.mark.parametrize("value", [3.95, "free", "-1", "NaN"])
def test_decimal_text_refuses_anything_else_as_a_skip(value: Any) -> None:
    with pytest.raises(SkipItem):
        decimal_text({"p": value}, "p")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("24", Decimal(24)), (0.44, Decimal("0.44")), (8, Decimal(8)), ("", None), (None, None)],
)
def test_loose_number_reads_numbers_and_numeric_strings(value: Any, expected: Any) -> None:
    assert loose_number({"n": value}, "n") == expected


@pytest.mark.parametrize("value", ["bad", True, [1], "-2"])
def test_loose_number_refuses_the_rest_as_a_skip(value: Any) -> None:
    with pytest.raises(SkipItem):
        loose_number({"n": value}, "n")
