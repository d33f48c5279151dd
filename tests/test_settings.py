"""Configuration: TOML file, environment overrides, secrets from files, clear errors."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tracker.fx import Rates
from tracker.settings import ConfigError, Settings, load_settings


def test_defaults_use_the_embedded_sqlite_in_the_user_data_dir(tmp_path: Path) -> None:
    settings = load_settings()
    assert settings.database_url.startswith("sqlite:///")
    assert settings.database_url.endswith("gpu-tracker/tracker.db")


def test_toml_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "tracker.toml"
    config.write_text(
        'database_url = "sqlite:////tmp/x.db"\n'
        'fx_rates = { EUR = "1.08" }\n'
        '[aws]\nregions = ["us-east-1"]\nspot_lookback_days = 3\n'
    )
    settings = load_settings(config)
    assert settings.aws.regions == ["us-east-1"]
    assert settings.fx_rates == {"EUR": Decimal("1.08")}
    # fx_rates is the manual override tracker.fx.Rates falls back to (no ECB series here)
    manual = Rates(manual=settings.fx_rates)
    assert manual.usd_per_unit("EUR") == Decimal("1.08")
    assert manual.usd_per_unit("GBP") is None

    monkeypatch.setenv("GPU_TRACKER_AWS__REGIONS", "us-west-2, eu-west-1")
    monkeypatch.setenv("GPU_TRACKER_DATABASE_URL", "postgresql://db/tracker")
    monkeypatch.setenv("GPU_TRACKER_CONFIG", str(config))
    settings = load_settings()
    assert settings.aws.regions == ["us-west-2", "eu-west-1"]
    assert settings.aws.spot_lookback_days == 3  # untouched file value survives
    assert settings.database_url == "postgresql://db/tracker"


def test_secret_from_file_is_never_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "key"
    secret.write_text("AIza-very-secret\n")
    monkeypatch.setenv("GPU_TRACKER_GCP__API_KEY_FILE", str(secret))
    settings = load_settings()
    key = settings.gcp.resolved_api_key()
    assert key is not None and key.get_secret_value() == "AIza-very-secret"
    assert "very-secret" not in repr(settings) and "very-secret" not in str(settings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[aws]\nspot_lookback_days = "many"\n', "aws.spot_lookback_days"),
        ("[aws]\nno_such_option = 1\n", "aws.no_such_option"),
        ("[aws\n", "invalid configuration"),
    ],
)
def test_bad_config_is_one_line_naming_file_and_setting(
    tmp_path: Path, text: str, expected: str
) -> None:
    config = tmp_path / "tracker.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    message = str(info.value)
    assert "\n" not in message and expected in message and str(config) in message


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "nope.toml")


@pytest.mark.parametrize("name", ["pricesheet", "aws", "gcp", "lambda", "runpod", "vastai", "oci"])
def test_enabled_reads_every_collectors_own_section(name: str) -> None:
    """``[lambda] enabled = false`` must switch Lambda off for `collect` and `serve`
    alike, though its field is ``lambda_`` (``lambda`` is a Python keyword)."""
    from tracker import registry

    assert registry.enabled(Settings(), name)
    off = Settings.model_validate({name: {"enabled": False}})
    assert not registry.enabled(off, name)
    assert registry.enabled(off, "a-plugin-without-a-section")
