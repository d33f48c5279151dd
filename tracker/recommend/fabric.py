"""Which GPU-to-GPU link an offer has when the offer does not say: the GPU part decides.

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
from tracker.models import Interconnect

__all__ = [
    "FAST",
    "INTERCONNECTS",
    "Links",
    "catalog_interconnect",
    "resolved_interconnect",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

INTERCONNECTS = tuple(i.value for i in Interconnect)
"""Interconnect names in code order (the offer table's ``interconnect_code``)."""
FAST = (Interconnect.NVLINK, Interconnect.GPU_FABRIC)
"""Links over which training state is sharded without the PCIe penalty."""

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
