"""The shipped example configurations load and mean what they say."""

from __future__ import annotations

from importlib.metadata import entry_points
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
    # Every collector but the sheet is off: each needs the network (a collector added
    # later and left on would make the quick start fail offline).
    names = {ep.name for ep in entry_points(group="gpu_tracker.collectors")}
    assert {"aws", "akash", "lium", "thundercompute"} <= names
    left_on = sorted(
        n
        for n in names - {"pricesheet", "fx", "remote"}
        if getattr(settings, "lambda_" if n == "lambda" else n).enabled
    )
    assert left_on == []
    assert settings.remote.url is None  # not configured: skipped, never fetched
    assert "EUR" in settings.fx_rates
    assert not settings.fx.enabled  # the ECB needs the network: the sheet's rate instead
