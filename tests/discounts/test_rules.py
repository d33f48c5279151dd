"""``[[discounts]]`` rules: parsed from the settings file into one-line errors naming
the file, the rule and the key, and applied when read (tracker.discounts)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from tracker.discounts import Discounts, parse_discounts
from tracker.fx import Rates
from tracker.settings import ConfigError, load_settings

D = Decimal
NOV_20 = datetime(2026, 11, 20, tzinfo=UTC)
P5_OD = ("aws", "on_demand", "p5.48xlarge", "us-east-1")


def _rules(*tables: dict[str, object]) -> Discounts:
    return Discounts(parse_discounts(list(tables)), Rates(manual={"EUR": D("1.05")}))


def _settings_error(tmp_path: Path, toml: str) -> str:
    path = tmp_path / "tracker.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message.split(": ", 1)[1]  # after "invalid configuration in <file>"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "percent = 150",
            "discounts: rule 'edp': percent: Input should be less than 100 (got 150)",
        ),
        ("percent = 15\nfoo = 1", "discounts: rule 'edp': unknown key 'foo'"),
        ("", "discounts: rule 'edp': percent: give either percent or price_per_hour (exactly one)"),
        (
            "percent = 15\nprice_per_hour = 40",
            "discounts: rule 'edp': percent: give either percent or price_per_hour (exactly one)",
        ),
        (
            'percent = 15\ncurrency = "EUR"',
            "discounts: rule 'edp': currency: names the currency of price_per_hour (set none here)",
        ),
        (
            'price_per_hour = 40\ncurrency = "euro"',
            "discounts: rule 'edp': currency: currency 'euro': expected a three-letter "
            "ISO 4217 code such as EUR",
        ),
        (
            "percent = 15\nvalid_from = 2026-12-01\nvalid_until = 2026-11-01",
            "discounts: rule 'edp': valid_until: must be after valid_from",
        ),
        (
            'percent = 15\npricing = ["on-demand"]',
            "discounts: rule 'edp': pricing.0: Input should be 'on_demand', 'spot', "
            "'reserved_1y', 'reserved_3y', 'savings_plan_1y', 'savings_plan_3y' or "
            "'capacity_block' "
            "(got 'on-demand')",
        ),
    ],
)
def test_a_bad_rule_is_one_line_naming_the_file_rule_and_key(
    tmp_path: Path, body: str, said: str
) -> None:
    toml = f'[[discounts]]\nname = "edp"\nprovider = "aws"\n{body}\n'
    assert _settings_error(tmp_path, toml) == said


def test_a_rule_without_a_name_is_named_by_its_number_and_names_are_unique(
    tmp_path: Path,
) -> None:
    toml = '[[discounts]]\nname = "a"\nprovider = "aws"\npercent = 10\n\n[[discounts]]\n'
    toml += 'provider = "gcp"\npercent = 10\n'
    assert _settings_error(tmp_path, toml) == "discounts: rule number 2: name: Field required"
    twice = toml.replace('provider = "gcp"', 'name = "a"\nprovider = "gcp"')
    assert _settings_error(tmp_path, twice) == "discounts: rule 'a': name: used twice"


def test_a_good_rule_loads_with_dates_as_utc_midnight(tmp_path: Path) -> None:
    path = tmp_path / "tracker.toml"
    path.write_text(
        '[[discounts]]\nname = "edp"\nprovider = "aws"\ninstance_types = "p5.*"\n'
        "percent = 15\nvalid_from = 2026-11-15\nvalid_until = 2027-11-15T00:00:00+01:00\n"
    )
    [rule] = load_settings(path).discounts
    assert rule.instance_types == ["p5.*"]
    assert rule.valid_from == datetime(2026, 11, 15, tzinfo=UTC)
    assert rule.valid_until == datetime(2027, 11, 14, 23, tzinfo=UTC)  # +01:00 → 23:00 UTC


def test_percent_off_in_the_offers_own_currency_and_in_usd() -> None:
    d = _rules({"name": "edp", "provider": "aws", "percent": 15})
    net = d.net(P5_OD, D("55.04"), "USD", D("55.04"), NOV_20)
    # 55.04 × 0.85 = 46.784
    assert (net.price_per_hour, net.price_per_hour_usd, net.rule) == (
        D("46.784"),
        D("46.784"),
        "edp",
    )
    # a EUR price: 10.00 EUR × 0.85 = 8.50 EUR; its USD figure 10.50 × 0.85 = 8.925
    eur = d.net(("aws", "on_demand", "p5.4xlarge", "eu-west-1"), D("10"), "EUR", D("10.5"), NOV_20)
    assert (eur.price_per_hour, eur.price_per_hour_usd) == (D("8.5"), D("8.925"))


def test_scope_globs_period_and_first_rule_wins() -> None:
    d = _rules(
        {
            "name": "p5-only",
            "provider": "aws",
            "instance_types": ["p5.*"],
            "regions": ["us-*"],
            "percent": 20,
            "valid_from": datetime(2026, 11, 15, tzinfo=UTC),
            "valid_until": datetime(2026, 12, 1, tzinfo=UTC),
        },
        {"name": "edp", "provider": "aws", "pricing": ["on_demand"], "percent": 10},
    )
    at = d.rule_for
    assert at(*P5_OD, NOV_20).name == "p5-only"  # type: ignore[union-attr]
    # before valid_from and from valid_until on, the next rule (file order) applies
    assert at(*P5_OD, datetime(2026, 11, 14, 23, 59, tzinfo=UTC)).name == "edp"  # type: ignore[union-attr]
    assert at(*P5_OD, datetime(2026, 12, 1, tzinfo=UTC)).name == "edp"  # type: ignore[union-attr]
    # the glob matches the whole name: p4d is not p5.*, and eu-west-1 is not us-*
    assert at("aws", "on_demand", "p4d.24xlarge", "us-east-1", NOV_20).name == "edp"  # type: ignore[union-attr]
    assert at("aws", "on_demand", "p5.48xlarge", "eu-west-1", NOV_20).name == "edp"  # type: ignore[union-attr]
    # spot is not covered by the second rule, and the first is only p5 in us-*
    assert at("aws", "spot", "p4d.24xlarge", "us-east-1", NOV_20) is None
    assert at("gcp", "on_demand", "a3-highgpu-8g", "us-central1", NOV_20) is None


def test_a_fixed_net_price_converts_at_the_rate_in_force_or_keeps_list_counted() -> None:
    d = _rules(
        {
            "name": "deal",
            "provider": "aws",
            "instance_types": ["p5.48xlarge"],
            "price_per_hour": "40",
            "currency": "EUR",
        }
    )
    # 40 EUR at 1.05 USD per EUR = 42.00 USD, and the USD offer's own figure is that too
    net = d.net(P5_OD, D("55.04"), "USD", D("55.04"), NOV_20)
    assert (net.price_per_hour, net.price_per_hour_usd, net.rule) == (D("42"), D("42"), "deal")
    # a CNY-priced offer: no CNY rate, so the fixed price cannot be expressed in it
    cny = d.net(("aws", "on_demand", "p5.48xlarge", "cn-north-1"), D("400"), "CNY", None, NOV_20)
    assert (cny.price_per_hour, cny.rule) == (D("400"), None)
    assert d.report() == (
        "1 offer kept its list price: no exchange rate for the fixed price of rule 'deal' (1)"
    )


def test_the_configuration_page_example_is_a_valid_pair_of_rules(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    section = page.split("## Discounts", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "tracker.toml"
    path.write_text(example)
    edp, deal = load_settings(path).discounts
    assert (edp.name, edp.percent, edp.instance_types) == ("aws-edp", D(15), ["p5.*", "p4d.*"])
    assert (deal.price_per_hour, deal.currency) == (D("18.00"), "USD")
    # the page's worked figure: 55.04 × 0.85 = 46.784 under aws-edp from 2026-11-15
    d = Discounts((edp, deal), Rates())
    assert d.net(P5_OD, D("55.04"), "USD", D("55.04"), NOV_20).price_per_hour_usd == D("46.784")
