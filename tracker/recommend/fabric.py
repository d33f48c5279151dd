"""Which GPU-to-GPU link an offer has when the offer does not say: the GPU part decides;
and, between instances, which network a cluster of the offer may run over and how fast
(:func:`node_gbps`, the one place a fabric becomes a bandwidth).

Price sheets and some provider payloads leave the interconnect ``unknown``. Treating
that as PCIe would never shard training state on a p4de or p5 and so exclude the very
boxes a large job needs. The catalog knows the part's form factor: SXM and OAM modules
are made only for baseboards that wire every GPU to the others (NVIDIA's HGX boards
with NVLink and NVSwitch; AMD's and Intel's OAM baseboards with Infinity Fabric or
Gaudi's on-die RoCE mesh), so a multi-GPU offer of such a part has that fabric. So does
a chip whose datasheet names its own chip-to-chip link (``chip_link``: AWS NeuronLink on
Trainium and Inferentia2, TPU ICI): every chip of a trn1.32xlarge, an inf2.48xlarge or a
TPU host sits on it. A PCIe card may or may not be bridged, and a superchip's links the
catalog does not describe: those stay ``unknown`` (treated as PCIe, never as NVLink).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tracker.catalog import GpuSpec
from tracker.models import RDMA_FABRICS, Fabric, Interconnect
from tracker.recommend.kinds import FabricNeed

__all__ = [
    "FABRICS",
    "FAST",
    "INTERCONNECTS",
    "Links",
    "catalog_interconnect",
    "node_gbps",
    "rdma",
    "resolved_interconnect",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

INTERCONNECTS = tuple(i.value for i in Interconnect)
"""Interconnect names in code order (the offer table's ``interconnect_code``)."""
FAST = (Interconnect.NVLINK, Interconnect.GPU_FABRIC)
"""Links over which training state is sharded without the PCIe penalty."""

FABRICS = tuple(f.value for f in Fabric)
"""Fabric names in code order (the offer table's ``fabric_code``)."""
_RDMA_BY_CODE = np.array([Fabric(name) in RDMA_FABRICS for name in FABRICS], np.bool_)
_UNKNOWN_FABRIC = FABRICS.index(Fabric.UNKNOWN.value)
FloatArray = npt.NDArray[np.float64]

_CODE = {i: INTERCONNECTS.index(i.value) for i in Interconnect}
_FAST_BY_CODE = np.array([Interconnect(name) in FAST for name in INTERCONNECTS], np.bool_)


@dataclass(frozen=True, slots=True)
class Links:
    """Per offer: the interconnect the estimate uses, and where it came from."""

    code: IntArray
    """Index into :data:`INTERCONNECTS`."""
    from_catalog: BoolArray
    """The offer said ``unknown`` and the catalog's part decided."""
    fast: BoolArray
    """NVLink or a GPU fabric: training state shards without the PCIe penalty."""


def catalog_interconnect(spec: GpuSpec | None) -> Interconnect:
    """The link a multi-GPU board of this part always has, else ``unknown``."""
    if spec is None:
        return Interconnect.UNKNOWN
    if spec.chip_link:
        # NeuronLink (Trainium, Inferentia2) and TPU ICI join every chip of the box.
        return Interconnect.GPU_FABRIC
    form = spec.form_factor.strip().upper()
    if form.startswith("SXM"):
        return Interconnect.NVLINK if spec.nvlink else Interconnect.GPU_FABRIC
    if form.startswith("OAM"):
        return Interconnect.GPU_FABRIC
    return Interconnect.UNKNOWN


def resolved_interconnect(
    stated: IntArray,
    gpu_code: IntArray,
    specs: Sequence[GpuSpec | None],
    multi: BoolArray,
) -> Links:
    """Interconnect codes with ``unknown`` filled from the catalog on multi-GPU offers."""
    by_model = np.array(
        [_CODE[catalog_interconnect(s)] for s in specs] or [_CODE[Interconnect.UNKNOWN]],
        np.int64,
    )
    unknown = _CODE[Interconnect.UNKNOWN]
    implied = by_model[gpu_code] if len(stated) else np.empty(0, np.int64)
    inferred = (stated == unknown) & multi & (implied != unknown)
    code = np.where(inferred, implied, stated)
    return Links(code, inferred, _FAST_BY_CODE[code])


def rdma(fabric_code: IntArray) -> BoolArray:
    """Offers whose fabric is built for collectives between nodes (TPU ICI included:
    a slice's chips talk over it as a GPU cluster's do over InfiniBand)."""
    return _RDMA_BY_CODE[fabric_code]


def node_gbps(
    fabric_code: IntArray, stated_gbps: FloatArray, need: FabricNeed, fallback_gbps: float
) -> FloatArray:
    """One instance's inter-node Gbit/s for a cluster's collectives; NaN where the job
    may not span instances of the offer.

    ``required``: RDMA fabrics only. ``preferred``: any fabric the provider states.
    ``any``: an ``unknown`` fabric too. A fabric without a stated bandwidth runs at
    ``fallback_gbps`` (never guessed fast)."""
    if need is FabricNeed.REQUIRED:
        allowed = _RDMA_BY_CODE[fabric_code]
    elif need is FabricNeed.PREFERRED:
        allowed = fabric_code != _UNKNOWN_FABRIC
    else:
        allowed = np.ones(len(fabric_code), np.bool_)
    gbps = np.where(np.isnan(stated_gbps), fallback_gbps, stated_gbps)
    return np.where(allowed, gbps, np.nan)
