"""Verda Instant Clusters from ``GET /v1/cluster-types`` as fixed-size cluster offers.

Verda sells multi-node clusters as products of their own: a cluster type (``16H200``)
is a fixed number of nodes (``node_details``: ``["2x 8 GPU nodes"]``) for one
``price_per_hour``, the price of the **whole cluster**, as ``/instance-types``'
``price_per_hour`` is the whole instance's (the same API and field; read per GPU, the
SDK's 16x H200 example at 45.50 would be 728 USD an hour). ``gpu``, ``cpu``,
``memory`` and ``gpu_memory`` are the cluster's totals. ``GET /v1/cluster-availability``
answers as ``/instance-availability`` does (``location_code``, ``availabilities``: the
cluster types deployable there now; the Go SDK's ``ClusterAvailability``).

Each (cluster type, location) is one offer for **one node** (:mod:`tracker.fixed_clusters`):
the GPUs, vCPUs and memory of a node (totals ÷ nodes), the cluster price ÷ nodes as its
hourly price, on demand (pay as you go), ``offering_class`` ``"cluster"``, and the node
count and whole price in the attributes, so the recommender ranks it only for a job of
at most that many nodes and charges the whole cluster. The API does not state the
fabric between the nodes, so it is ``unknown``. A type whose ``node_details`` is not one
"<nodes>x <GPUs> GPU nodes" entry, or disagrees with ``gpu.number_of_gpus``, is a
counted ``unknown_node_shape`` skip: its per-node shape would be a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from decimal import Decimal
from typing import Any

from collectors.base import CollectorError, SkipItem, parse_each
from collectors.gpucloud import decimal_text, gpu_offer, text, where_listed
from tracker.catalog import resolve_gpu
from tracker.fixed_clusters import CLUSTER_CLASS, CLUSTER_PRICE, NODES
from tracker.models import AttributeValue, Interconnect, Offer, PricingModel

__all__ = ["CLUSTER_AVAILABILITY_PATH", "CLUSTER_TYPES_PATH", "parse_cluster_types"]

CLUSTER_TYPES_PATH = "/cluster-types"
CLUSTER_AVAILABILITY_PATH = "/cluster-availability"
PRICE_PLACES = Decimal("0.0000000001")
_NODES = re.compile(r"^\s*(\d+)\s*x\s*(\d+)\s+GPU\s+nodes?\s*$", re.IGNORECASE)

Where = Mapping[tuple[str, str], Collection[str]]
"""(pricing, cluster type) -> location codes (deployable now, or listed before)."""


def _whole(part: Any, field: str) -> int | None:
    value = part.get(field) if isinstance(part, Mapping) else None
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SkipItem("malformed_item", f"{field} is not a whole number ({value!r})")
    return value


def _shape(item: Mapping[str, Any]) -> tuple[int, int]:
    """(nodes, GPUs per node) from ``node_details``, checked against the GPU total."""
    details = item.get("node_details")
    found = (
        _NODES.match(details[0])
        if isinstance(details, list) and len(details) == 1 and isinstance(details[0], str)
        else None
    )
    if found is None:
        raise SkipItem("unknown_node_shape", f"node_details {details!r}")
    nodes, per_node = int(found.group(1)), int(found.group(2))
    total = _whole(item.get("gpu"), "number_of_gpus")
    if nodes < 2 or per_node < 1 or total != nodes * per_node:
        raise SkipItem(
            "unknown_node_shape", f"node_details {details!r} but gpu.number_of_gpus {total!r}"
        )
    return nodes, per_node


def _per_node(total: int | None, nodes: int) -> Decimal | None:
    """A node's share of a cluster total (None when not stated)."""
    return None if total is None else Decimal(total) / nodes


def parse_cluster_type(item: Any, now: Where, before: Where, provider: str) -> list[Offer]:
    """One-node offers of one cluster type, one per location it is (or was) listed in."""
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"cluster type is {type(item).__name__}")
    name = text(item, "cluster_type")
    nodes, per_node = _shape(item)
    price = decimal_text(item, "price_per_hour")
    if not price:
        raise SkipItem("no_price", f"price_per_hour {item.get('price_per_hour')!r}")
    currency = item.get("currency", "usd")
    if not isinstance(currency, str) or len(currency) != 3:
        raise SkipItem("malformed_item", f"currency is {currency!r}")
    model = text(item, "model")
    vram = _whole(item.get("gpu_memory"), "size_in_gigabytes")
    per_gpu = Decimal(vram) / (nodes * per_node) if vram else None
    attributes: dict[str, AttributeValue] = {NODES: nodes, CLUSTER_PRICE: price}
    attributes |= {f: item[f] for f in ("name",) if isinstance(item.get(f), str)}
    key = (PricingModel.ON_DEMAND.value, name)
    return [
        gpu_offer(
            name,
            resolve_gpu(model, per_gpu),
            model,
            attributes,
            provider=provider,
            instance_type=name,
            region=location,
            pricing=PricingModel.ON_DEMAND,
            offering_class=CLUSTER_CLASS,
            price_per_hour=(price / nodes).quantize(PRICE_PLACES),
            currency=currency.upper(),
            gpu_count=Decimal(per_node),
            gpu_memory_gib=per_gpu,
            vcpus=_per_node(_whole(item.get("cpu"), "number_of_cores"), nodes),
            memory_gib=_per_node(_whole(item.get("memory"), "size_in_gigabytes"), nodes),
            interconnect=Interconnect.UNKNOWN,
            availability=availability,
        )
        for location, availability in sorted(
            where_listed(now.get(key, ()), before.get(key, ())).items()
        )
    ]


def parse_cluster_types(
    payload: Any,
    now: Where,
    skip: Callable[[str, str], None],
    before: Where | None = None,
    provider: str = "verda",
) -> list[Offer]:
    """Every one-node cluster offer in a ``/cluster-types`` response; a type whose
    per-node shape or price is not stated is a counted skip."""
    if not isinstance(payload, list):
        raise CollectorError("verda: cluster-types is not a list")
    found = parse_each(
        payload,
        lambda item: parse_cluster_type(item, now, before or {}, provider),
        skip,
        where=lambda item: str(item.get("cluster_type") or "") if isinstance(item, Mapping) else "",
    )
    return [offer for offers in found for offer in offers]
