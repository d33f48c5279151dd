"""Nebius collector against a local gRPC server answering with the SDK's own messages
(tests/fixtures/nebius/SOURCES.md): the calculator's hourly cost is the whole VM's."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import grpc
import pytest

from collectors.base import CollectorError, MissingCredentials, RunContext, SkipItem
from collectors.nebius import NebiusCollector, Quote, parse_quote, platform_gpu
from tests.collectors.nebius_server import NebiusServer, serve_nebius
from tracker.models import Availability, Offer, PricingModel
from tracker.settings import Settings

H100 = "gpu-h100-sxm"
ONE, EIGHT = "1gpu-16vcpu-200gb", "8gpu-128vcpu-1600gb"
SETTING = (
    "GPU_TRACKER_NEBIUS__IAM_TOKEN (or NEBIUS_IAM_TOKEN) or GPU_TRACKER_NEBIUS__CREDENTIALS_FILE"
)


def collect(
    server: NebiusServer | None = None,
    scope: frozenset[PricingModel] | None = None,
) -> tuple[list[Offer], NebiusServer, RunContext]:
    with serve_nebius(server) as (url, state):
        settings = Settings(nebius={"endpoint_url": url, "iam_token": "neb-token"})
        ctx = RunContext(settings=settings)
        if scope is not None:
            ctx = RunContext(settings=settings, pricing_scope=scope)
        offers = list(NebiusCollector.from_settings(settings).collect(ctx))
    return offers, state, ctx


def test_each_gpu_preset_is_priced_by_the_calculator_per_whole_vm() -> None:
    offers, state, ctx = collect()
    prices = {(o.instance_type, o.region, o.pricing): o.price_per_hour for o in offers}
    assert prices == {
        # on demand: 2.95 per GPU-hour, so 1 GPU = 2.95 and 8 GPUs = 8 x 2.95 = 23.60
        (f"{H100} {ONE}", "eu-north1", PricingModel.ON_DEMAND): Decimal("2.95"),
        (f"{H100} {EIGHT}", "eu-north1", PricingModel.ON_DEMAND): Decimal("23.6"),
        # preemptible: 1.25 per GPU-hour, so 1 GPU = 1.25 and 8 GPUs = 8 x 1.25 = 10
        (f"{H100} {ONE}", "eu-north1", PricingModel.SPOT): Decimal("1.25"),
        (f"{H100} {EIGHT}", "eu-north1", PricingModel.SPOT): Decimal("10"),
    }
    eight = next(o for o in offers if o.instance_type.endswith(EIGHT))
    assert (eight.gpu_model, eight.gpu_known, eight.gpu_count) == ("H100-SXM", True, Decimal(8))
    assert (eight.vcpus, eight.memory_gib) == (Decimal(128), Decimal(1600))
    assert (eight.currency, eight.availability) == ("USD", Availability.UNKNOWN)
    assert eight.attributes["gpu_clustering"] is True
    # allow_gpu_clustering: the preset joins a GPU cluster, which the API defines by its
    # InfiniBand fabric; the 1-GPU preset does not, and neither states a bandwidth.
    assert (eight.fabric, eight.network_gbps) == ("infiniband", None)
    one = next(o for o in offers if o.instance_type.endswith(ONE))
    assert one.attributes["gpu_clustering"] is False
    assert one.fabric == "unknown"
    assert set(state.tokens) == {"Bearer neb-token"}
    assert ctx.skips == {}


def test_cpu_only_presets_are_not_offers_nor_priced() -> None:
    offers, state, _ = collect()
    assert not [o for o in offers if "cpu-d3" in o.instance_type]
    asked = {r.resource_spec.compute_instance_spec.spec.resources.platform for r in state.asked}
    assert asked == {H100}


def test_no_spot_where_the_platform_is_not_allowed_for_preemptibles() -> None:
    server = NebiusServer()
    server.platforms.items[0].status.allowed_for_preemptibles = False
    offers, state, _ = collect(server)
    assert {o.pricing for o in offers} == {PricingModel.ON_DEMAND}
    assert len(state.asked) == 2  # the two GPU presets, on demand only


def test_a_spot_only_run_asks_no_on_demand_price() -> None:
    offers, state, _ = collect(scope=frozenset({PricingModel.SPOT}))
    assert {o.pricing for o in offers} == {PricingModel.SPOT}
    assert all(r.resource_spec.compute_instance_spec.spec.preemptible for r in state.asked)


def quote(platform: str = H100, cost: str = "2.95") -> Quote:
    return Quote("eu-north1", platform, ONE, 16, 200, 1, PricingModel.ON_DEMAND, cost)


def test_unknown_gpu_names_are_kept() -> None:
    assert platform_gpu("gpu-b200-sxm-a") == "B200"
    offer = parse_quote(quote("gpu-x900-sxm"), "USD")
    assert (offer.gpu_model, offer.gpu_raw_name, offer.gpu_known) == ("X900", "X900", False)
    odd = parse_quote(quote("accel-next"), "USD")  # not gpu-<model>-…: the whole name
    assert (odd.gpu_raw_name, odd.gpu_known) == ("accel-next", False)


@pytest.mark.parametrize(
    ("cost", "reason"), [("", "malformed_item"), ("n/a", "malformed_item"), ("0", "zero_price")]
)
def test_a_cost_that_is_no_price_is_a_counted_skip(cost: str, reason: str) -> None:
    with pytest.raises(SkipItem) as info:
        parse_quote(quote(cost=cost), "USD")
    assert info.value.reason == reason


def test_the_contract_currency_is_the_settings() -> None:
    assert parse_quote(quote(), "EUR").currency == "EUR"


def test_refused_token_is_one_line_naming_provider_and_settings() -> None:
    server = NebiusServer(refuse=grpc.StatusCode.UNAUTHENTICATED)
    with pytest.raises(CollectorError) as info:
        collect(server)
    assert str(info.value) == (
        f"nebius: the credentials were refused (UNAUTHENTICATED) listing tenants; check {SETTING}"
    )
    assert "neb-token" not in str(info.value)


def test_a_preset_the_calculator_cannot_price_is_a_counted_skip() -> None:
    server = NebiusServer()
    server.estimates = server.estimates[:3]  # no answer for 8 GPUs preemptible
    offers, _, ctx = collect(server)
    assert len(offers) == 3
    assert ctx.skips == {"no_price": 1}
    assert ctx.details[0].startswith("no_price: nebius: estimating prices failed:")


def test_a_refused_price_fails_the_run_naming_the_settings() -> None:
    with pytest.raises(CollectorError) as info:
        collect(NebiusServer(refuse_estimates=True))
    assert str(info.value) == (
        f"nebius: the credentials were refused (PERMISSION_DENIED) estimating prices; check {SETTING}"
    )


def test_every_page_of_projects_is_read() -> None:
    from tests.collectors.nebius_server import message

    server = NebiusServer()
    server.projects.next_page_token = "page-2"
    west = {"metadata": {"id": "project-e00west"}, "spec": {"region": "eu-west1"}}
    server.pages[("nebius.iam.v2.ProjectService", "page-2")] = message(
        "nebius.iam.v2.ListProjectsResponse", {"items": [west]}
    )
    # the same platforms and prices in the second project (its own parent_id asked)
    server.estimates += [
        (type(ask).from_json(ask.to_json().replace("e00north", "e00west")), answer)
        for ask, answer in server.estimates
    ]
    offers, _, ctx = collect(server)
    regions = sorted(o.region for o in offers)
    assert regions == ["eu-north1"] * 4 + ["eu-west1"] * 4  # 2 presets x 2 pricings each
    assert ctx.skips == {}


def test_an_account_without_projects_fails_the_run() -> None:
    server = NebiusServer()
    del server.projects.items[:]
    with pytest.raises(CollectorError, match=r"^nebius: the account has no project"):
        collect(server)


def test_credentials_from_settings_file_or_the_sdk_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("NEBIUS_IAM_TOKEN", raising=False)
    with pytest.raises(MissingCredentials) as info:
        NebiusCollector.from_settings(Settings())
    assert str(info.value) == f"no API key: set {SETTING}"
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", "from-env")
    assert NebiusCollector.from_settings(Settings())._token == "from-env"
    token = tmp_path / "token"
    token.write_text("from-file\n")
    mounted = Settings(nebius={"iam_token_file": str(token)})
    assert NebiusCollector.from_settings(mounted)._token == "from-file"
    monkeypatch.delenv("NEBIUS_IAM_TOKEN")
    account = Settings(nebius={"credentials_file": str(tmp_path / "sa.json")})
    assert NebiusCollector.from_settings(account)._token == ""  # the SDK reads the file


def test_endpoint_must_be_an_origin() -> None:
    with pytest.raises(ValueError, match="without a path"):
        Settings(nebius={"endpoint_url": "http://127.0.0.1:9/v1"})
