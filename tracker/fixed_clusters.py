"""What a fixed-size cluster offer sells: one node of a cluster rented only whole.

Some GPU clouds sell a multi-node cluster as one product at one hourly price (Verda's
Instant Clusters: ``16H200`` is two 8-GPU nodes for one ``price_per_hour``). It is stored
as an offer for **one node** of it (its GPUs, vCPUs and memory, and the cluster price ÷
its nodes as the hourly price) so it lists and compares with single instances, with
``offering_class`` ``"cluster"`` and the cluster's node count in the ``cluster_nodes``
attribute. It only serves a job of at most that many nodes, and the whole cluster is
paid whatever the job uses: a job's cost is the node price × ``cluster_nodes`` × its
hours. This module is the one reading of that shape, for the recommender's eligibility
rule (:mod:`tracker.recommend.rank`) and the collectors that write it.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation

__all__ = ["CLUSTER_CLASS", "CLUSTER_PRICE", "NODES", "cluster_nodes"]

CLUSTER_CLASS = "cluster"
"""The ``offering_class`` of a fixed-size cluster offer (a cheap marker the offer
table tests before it reads attributes)."""
NODES = "cluster_nodes"
CLUSTER_PRICE = "cluster_price_per_hour"
"""The whole cluster's hourly price as the provider states it, in the offer's currency."""


def cluster_nodes(offering_class: str, attributes: Mapping[str, object] | None) -> int:
    """The node count of a fixed-size cluster offer; 0 for any other offer, or for a
    cluster offer whose count is missing or not a whole number of at least 2 (such a row
    is not treated as a cluster: the collector never writes one)."""
    if offering_class != CLUSTER_CLASS or not attributes:
        return 0
    value = attributes.get(NODES)
    if value is None or isinstance(value, bool):
        return 0
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return 0
    if not number.is_finite() or number != number.to_integral_value() or number < 2:
        return 0
    return int(number)
