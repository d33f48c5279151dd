"""The shipped example configurations load and mean what they say."""

from __future__ import annotations

from pathlib import Path

from tracker.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent


def test_example_config_matches_the_defaults() -> None:
    example = load_settings(ROOT / "config" / "tracker.toml")
    defaults = load_settings()
    assert example.model_dump() == defaults.model_dump()


def test_quickstart_config_loads_the_sample_sheet_offline() -> None:
    settings = load_settings(ROOT / "examples" / "quickstart.toml")
    # relative to the config file, not to the directory it is run from
    assert settings.pricesheet.path == ROOT / "examples" / "prices.csv"
    assert not (settings.aws.enabled or settings.azure.enabled or settings.gcp.enabled)
    assert not (
        settings.lambda_.enabled
        or settings.runpod.enabled
        or settings.vastai.enabled
        or settings.oci.enabled
        or settings.alibaba.enabled
        or settings.huawei.enabled
        or settings.tencent.enabled
        or settings.digitalocean.enabled
        or settings.verda.enabled
        or settings.tensordock.enabled
        or settings.vultr.enabled
        or settings.cudo.enabled
        or settings.hotaisle.enabled
        or settings.jarvislabs.enabled
        or settings.seeweb.enabled
        or settings.nebius.enabled
        or settings.cloudrift.enabled
    )
    assert "EUR" in settings.fx_rates
    assert not settings.fx.enabled  # the ECB needs the network: the sheet's rate instead
