"""Verda Instant Clusters as one-node offers of a fixed-size cluster (SOURCES.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from collectors.verda import locations
from collectors.verda_clusters import parse_cluster_types
from tracker.fixed_clusters import cluster_nodes
from tracker.models import Availability, Fabric, Offer, PricingModel

FIXTURES = Path(__file__).parent.parent / "fixtures" / "verda"
OD = PricingModel.ON_DEMAND


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def parse(
    types: Any | None = None, before: dict[tuple[str, str], set[str]] | None = None
) -> tuple[list[Offer], list[tuple[str, str]]]:
    skips: list[tuple[str, str]] = []
    now = locations(load("cluster_availability.json"), OD)
    offers = parse_cluster_types(
        load("cluster_types.json") if types is None else types,
        now,
        lambda r, d: skips.append((r, d)),
        before,
    )
    return offers, skips


def test_a_cluster_type_is_one_node_at_the_cluster_price_over_its_nodes() -> None:
    [offer], skips = parse()
    assert skips == []
    # 16H200: "2x 8 GPU nodes", 45.50 USD an hour for the whole cluster
    assert (offer.instance_type, offer.region, offer.pricing) == ("16H200", "FIN-01", OD)
    assert offer.offering_class == "cluster"
    assert offer.availability is Availability.AVAILABLE
    assert offer.gpu_model == "H200" and offer.gpu_count == Decimal(8)
    assert offer.price_per_hour == Decimal("22.75")  # 45.50 / 2 nodes
    assert offer.currency == "USD"
    assert offer.gpu_memory_gib == Decimal("137.5")  # 2200 GB / 16 GPUs
    assert offer.vcpus == Decimal(32)  # 64 cores / 2 nodes
    assert offer.memory_gib == Decimal(2048)  # 4096 GB / 2 nodes
    assert offer.attributes["cluster_nodes"] == 2
    assert offer.attributes["cluster_price_per_hour"] == Decimal("45.50")
    assert offer.fabric is Fabric.UNKNOWN  # the API does not name the network
    assert cluster_nodes(offer.offering_class, offer.attributes) == 2


def test_a_location_listed_before_stays_unavailable() -> None:
    offers, _ = parse(before={(OD.value, "16H200"): {"FIN-03"}})
    assert {(o.region, o.availability) for o in offers} == {
        ("FIN-01", Availability.AVAILABLE),
        ("FIN-03", Availability.UNAVAILABLE),
    }


@pytest.mark.parametrize(
    ("details", "gpus"),
    [
        (["2x 8 GPU nodes", "1x 4 GPU node"], 16),  # not one shape
        (["a 16-GPU cluster"], 16),  # no node count stated
        (["2x 8 GPU nodes"], 24),  # 2 × 8 is not the 24 GPUs it lists
        (["1x 16 GPU nodes"], 16),  # one node is an instance, not a cluster
    ],
)
def test_a_node_shape_that_is_not_stated_is_a_counted_skip(details: Any, gpus: int) -> None:
    item = load("cluster_types.json")[0]
    item["node_details"], item["gpu"]["number_of_gpus"] = details, gpus
    offers, skips = parse([item])
    assert offers == []
    assert [reason for reason, _ in skips] == ["unknown_node_shape"]
    assert skips[0][1].startswith("16H200: ")


def test_no_price_is_a_counted_skip_not_a_free_cluster() -> None:
    item = load("cluster_types.json")[0]
    item["price_per_hour"] = "0"
    offers, skips = parse([item])
    assert offers == [] and [r for r, _ in skips] == ["no_price"]


@pytest.mark.parametrize(
    ("offering_class", "attributes", "nodes"),
    [
        ("cluster", {"cluster_nodes": 4}, 4),
        ("cluster", {"cluster_nodes": "4"}, 4),  # as a JSON round trip may give it back
        ("cluster", {"cluster_nodes": 1}, 0),
        ("cluster", {"cluster_nodes": 2.5}, 0),
        ("cluster", {}, 0),
        ("secure", {"cluster_nodes": 4}, 0),  # only the marked class is a cluster
    ],
)
def test_cluster_nodes_reads_only_a_marked_whole_count(
    offering_class: str, attributes: dict[str, Any], nodes: int
) -> None:
    assert cluster_nodes(offering_class, attributes) == nodes
