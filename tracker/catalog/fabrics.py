"""The inter-node fabric the providers document per instance type (``fabrics.toml``).

Azure's Retail Prices API, GCP's Cloud Billing Catalog and OCI's price list say nothing
of the network between instances; their documentation does, per size or shape. The
rows are transcribed in ``fabrics.toml`` beside this module, each citing its page, and
checked hard at load: a typo in a field or a fabric name stops the load with one line
naming the file, the row and the field. A type without a row is ``unknown``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from tracker.models import Fabric

__all__ = [
    "FABRICS_FILE",
    "DocumentedFabric",
    "FabricDataError",
    "documented_fabric",
    "load_fabrics",
]

FABRICS_FILE = Path(__file__).with_name("fabrics.toml")
_FIELDS = frozenset(
    {"provider", "instance_type", "fabric", "network_gbps", "basis", "source", "note"}
)
_BASES = frozenset({"gpu_network", "max_total"})


class FabricDataError(ValueError):
    """The fabrics data file is malformed; the message names the file, row and field."""


@dataclass(frozen=True, slots=True)
class DocumentedFabric:
    """One documented (provider, instance type): its fabric, bandwidth and source."""

    provider: str
    instance_type: str
    fabric: Fabric
    network_gbps: Decimal | None
    basis: str
    source: str
    note: str = ""


def _row(raw: Any, n: int, where: Path) -> DocumentedFabric:
    at = f"{where}: [[fabric]] #{n}"
    if not isinstance(raw, dict):
        raise FabricDataError(f"{at}: expected a table")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise FabricDataError(f"{at}: unknown field {unknown[0]!r}")
    for name in ("provider", "instance_type", "fabric", "source"):
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise FabricDataError(f"{at}: {name} is required text")
    try:
        fabric = Fabric(raw["fabric"])
    except ValueError:
        raise FabricDataError(f"{at}: fabric {raw['fabric']!r} is not a Fabric") from None
    if fabric is Fabric.UNKNOWN:
        raise FabricDataError(f"{at}: fabric 'unknown' is what a missing row means")
    gbps = raw.get("network_gbps")
    if gbps is not None and (
        isinstance(gbps, bool) or not isinstance(gbps, int | float) or gbps <= 0
    ):
        raise FabricDataError(f"{at}: network_gbps must be a positive number")
    basis = raw.get("basis", "gpu_network")
    if basis not in _BASES:
        raise FabricDataError(f"{at}: basis {basis!r} is not gpu_network or max_total")
    return DocumentedFabric(
        provider=raw["provider"],
        instance_type=raw["instance_type"],
        fabric=fabric,
        network_gbps=None if gbps is None else Decimal(str(gbps)),
        basis=basis,
        source=raw["source"],
        note=str(raw.get("note", "")),
    )


def load_fabrics(path: Path = FABRICS_FILE) -> Mapping[tuple[str, str], DocumentedFabric]:
    """Every row by (provider, instance type); a duplicate key is an error."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    rows: dict[tuple[str, str], DocumentedFabric] = {}
    for n, raw in enumerate(data.get("fabric", []), start=1):
        row = _row(raw, n, path)
        key = (row.provider, row.instance_type)
        if key in rows:
            raise FabricDataError(f"{path}: [[fabric]] #{n}: {key} listed twice")
        rows[key] = row
    return rows


@lru_cache(maxsize=1)
def _shipped() -> Mapping[tuple[str, str], DocumentedFabric]:
    return load_fabrics()


def documented_fabric(provider: str, instance_type: str) -> DocumentedFabric | None:
    """The shipped row for one instance type, None where the docs were not transcribed."""
    return _shipped().get((provider, instance_type))
