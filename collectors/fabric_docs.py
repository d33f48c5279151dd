"""An offer's ``fabric`` and ``network_gbps`` from the providers' documentation.

For the collectors whose price source never states the network between instances
(Azure Retail Prices, GCP Cloud Billing, OCI's price list): the row transcribed in
``tracker/catalog/fabrics.toml`` for the instance type, or ``unknown`` without one.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TypedDict

from tracker.catalog import documented_fabric
from tracker.models import Fabric

__all__ = ["DocumentedNetwork", "documented_network"]


class DocumentedNetwork(TypedDict):
    """The two Offer keyword arguments (typed, so ``**`` them into an Offer checks)."""

    fabric: Fabric
    network_gbps: Decimal | None


def documented_network(provider: str, instance_type: str) -> DocumentedNetwork:
    """``{"fabric": ..., "network_gbps": ...}`` as Offer keyword arguments."""
    row = documented_fabric(provider, instance_type)
    if row is None:
        return {"fabric": Fabric.UNKNOWN, "network_gbps": None}
    return {"fabric": row.fabric, "network_gbps": row.network_gbps}
