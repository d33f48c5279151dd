"""The OpenAPI document tells the truth: schemathesis, a client nobody here wrote,
finds no failure against a live server, and the document names its closed sets.

The store holds offers of every pricing model (the dashboard store's on-demand, spot
and reserved 1y, plus reserved 3y) and one priced in SGD with a configured rate, so
every enum value has rows behind it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.conftest import make_offer
from tests.listed_collector import ListCollector
from tests.web.conftest import Site, serve
from tests.web.store import DAY0, fill
from tracker.collect import run_collector
from tracker.collect_services import import_service_sheet
from tracker.models import PricingModel
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine
from tracker.web.params import TIME_PATTERN

pytest.importorskip("schemathesis")

ROOT = Path(__file__).resolve().parents[2]
ST = Path(sys.executable).with_name("st")


class Gamma(ListCollector):
    name: ClassVar[str] = "gamma"


@pytest.fixture(scope="module")
def every_pricing_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    url = f"sqlite:///{tmp_path_factory.mktemp('openapi') / 'tracker.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    settings = Settings(database_url=url, fx_rates={"SGD": Decimal("0.74")})
    fill(engine, settings)
    gamma = [
        make_offer(provider="gamma", instance_type="g.h100", pricing="reserved_3y"),
        make_offer(provider="gamma", instance_type="g.h100", pricing="savings_plan_1y"),
        make_offer(provider="gamma", instance_type="g.h100", pricing="savings_plan_3y"),
        make_offer(
            provider="gamma",
            instance_type="g.h100",
            pricing="capacity_block",
            offering_class="1x24h",
        ),
        make_offer(provider="gamma", instance_type="g.h100", pricing="on_demand", currency="SGD"),
    ]
    assert run_collector(engine, Gamma(gamma), settings, now=DAY0).ok
    # storage and egress tiers, so /api/v1/sync/service-prices answers rows to check
    sheet = ROOT / "tests" / "fixtures" / "remote" / "team-services.csv"
    assert import_service_sheet(engine, sheet, provider="sheet", source="sheet", complete=True).ok
    server = serve(settings, engine)
    yield Site(server.url, engine, settings, url)
    server.stop()
    engine.dispose()


def _param(doc: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    params = doc["paths"][path]["get"]["parameters"]
    schema: dict[str, Any] = next(p for p in params if p["name"] == name)["schema"]
    return schema


def _values(schema: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    """The enum of a parameter's value (through anyOf, array items and $ref)."""
    for option in schema.get("anyOf", [schema]):
        found = option.get("items", option)
        ref = found.get("$ref")
        if ref:
            found = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
        if "enum" in found:
            return list(found["enum"])
    raise AssertionError(f"no enum in {schema}")


def test_the_document_names_its_errors_and_closed_sets(every_pricing_site: Site) -> None:
    doc = every_pricing_site.get("/api/openapi.json").json()
    for path, ops in doc["paths"].items():
        responses = ops["get"]["responses"]
        assert "422" not in responses, path  # FastAPI's own error is never sent
        for code in ("400", "503"):
            assert responses[code]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"
            }
    assert doc["components"]["schemas"]["Error"]["required"] == ["error"]
    assert _values(_param(doc, "/api/v1/offers", "pricing"), doc) == [p.value for p in PricingModel]
    assert _values(_param(doc, "/api/v1/offers", "sort"), doc) == ["price", "price_per_gpu"]
    # USD always; SGD by its configured rate; EUR would need the ECB's series (none stored).
    assert _values(_param(doc, "/api/v1/offers", "currency"), doc) == ["SGD", "USD"]
    profiles = _values(_param(doc, "/api/v1/recommend", "profile"), doc)
    assert "bert-base-finetune" in profiles and profiles == sorted(profiles)
    gpus = _values(_param(doc, "/api/v1/compare", "gpu"), doc)
    assert {"H100-SXM", "H100", "L4"} <= set(gpus)
    # history: one route per question, each parameter required or free; the legacy
    # /api/v1/history (parameters in combinations) still answers but is not documented
    assert "/api/v1/history" not in doc["paths"]
    offer = doc["paths"]["/api/v1/history/offer"]["get"]
    required = {p["name"] for p in offer["parameters"] if p.get("required")}
    assert required == {"provider", "instance_type", "region"}
    assert "404" in offer["responses"]
    gpu = doc["paths"]["/api/v1/history/gpu"]["get"]
    assert {p["name"] for p in gpu["parameters"] if p.get("required")} == {"gpu"}
    assert "" not in _values(_param(doc, "/api/v1/history/gpu", "gpu"), doc)  # never blank
    # times are one exact pattern, the one the routes enforce, and said in words
    since = _param(doc, "/api/v1/history/gpu", "since")
    assert since["pattern"] == TIME_PATTERN == _param(doc, "/api/v1/alerts", "since")["pattern"]
    described = next(p for p in gpu["parameters"] if p["name"] == "since")["description"]
    assert described.startswith("now, today, yesterday; an age before now (30d, 12h, 2w")
    # plans: steady GPUs required on /api/v1/plan, bursts alone on /api/v1/plan/burst
    for path, needed in (
        ("/api/v1/plan", "steady_gpus"),
        ("/api/v1/plan/burst", "burst_gpu_hours"),
    ):
        params = doc["paths"][path]["get"]["parameters"]
        assert {p["name"] for p in params if p.get("required")} == {"gpu", needed}
    limit = _param(doc, "/api/v1/offers", "limit")
    assert limit["maximum"] == every_pricing_site.settings.web.max_limit


def test_a_documented_value_is_accepted(every_pricing_site: Site) -> None:
    """The values schemathesis found rejected before: each listed one now works."""
    doc = every_pricing_site.get("/api/openapi.json").json()
    for profile in _values(_param(doc, "/api/v1/recommend", "profile"), doc):
        r = every_pricing_site.get("/api/v1/recommend", params={"profile": profile})
        assert r.status_code == 200, (profile, r.text)
    for currency in ("SGD", "USD"):
        r = every_pricing_site.get("/api/v1/offers", params={"currency": currency})
        assert r.status_code == 200 and r.json(), currency
    assert every_pricing_site.get("/api/v1/offers", params={"currency": "EUR"}).status_code == 400
    for pricing in PricingModel:
        r = every_pricing_site.get("/api/v1/offers", params={"pricing": pricing.value})
        assert r.status_code == 200 and r.json(), pricing  # every model has an offer


@pytest.mark.timeout(900)  # two to four minutes on a shared machine: above the default 300 s
def test_schemathesis_finds_no_failure(every_pricing_site: Site, tmp_path: Path) -> None:
    command = [
        str(ST),
        "--config-file",
        str(ROOT / "schemathesis.toml"),
        "--no-color",
        "run",
        f"{every_pricing_site.url}/api/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        "25",
        "--seed",
        os.environ.get("SCHEMATHESIS_SEED", "26"),
    ]
    # in tmp_path: schemathesis keeps a cache folder in its working directory
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    counted = re.search(r"(\d+) generated, (\d+) passed", result.stdout)
    assert counted is not None and counted.group(1) == counted.group(2), result.stdout[-3000:]
    assert int(counted.group(1)) > 100  # it did run: every operation, many cases


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("now", True),
        ("7d", True),
        ("1.5d", True),
        ("7d ago", True),
        ("999w", True),  # 19 years: inside what a date holds
        ("2026-01-01", True),
        ("2000-02-29", True),  # 2000 is a leap year (divisible by 400)
        ("2026-12-31T23:59:59.123456+05:30", True),
        ("2026-01-01T10:30Z", True),
        ("2100-02-29", False),  # 2100 is not (divisible by 100, not 400)
        ("2026-02-30", False),
        ("2026-04-31", False),
        ("1999-12-31", False),  # before 2000
        ("1000w", False),  # 19 centuries: out of range, so outside the pattern
        ("NOW", False),
        ("2026-01-01 10:30", False),
    ],
)
def test_the_time_pattern_is_exactly_what_the_routes_read(text: str, accepted: bool) -> None:
    """A text the pattern allows is a time parse_time reads inside 1900-9999 (no 400 a
    schema-valid request could get); one it refuses is refused by the routes too."""
    from datetime import UTC, datetime

    from tracker.history.args import parse_time
    from tracker.web.params import check_time

    assert bool(re.match(TIME_PATTERN, text)) is accepted
    if accepted:
        now = datetime(2026, 12, 4, tzinfo=UTC)
        assert check_time("since", parse_time(text, "since", now=now)) is not None
