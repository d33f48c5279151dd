"""OCI GPU shapes: hardware from Oracle's shape documentation, price part from the price list.

OCI's public price list sells GPU-hours by *part number* ("OCI - Compute - GPU - H100",
B98415), not shapes; a shape's hourly price is its part's per-GPU-hour price times
its GPU count. Hardware (GPUs, OCPUs, memory) is not in the price list, so each row
cites the "Compute Shapes" documentation section it comes from.

x86 shapes: 1 OCPU = 2 vCPUs; Arm (Grace, Ampere): 1 OCPU = 1 core = 1 vCPU.

``preemptible`` marks shapes that can run as preemptible capacity; only those get a
spot price (50 % of on-demand, :data:`PREEMPTIBLE_RULE`). Oracle's "Preemptible
Instances" page (:data:`PREEMPTIBLE_DOC`, "Support and Limitations") says "Preemptible
capacity does not support bare metal instances", and Oracle's GA announcement made it
available on all VM shapes (but VM.Standard.E2.1.Micro), so here only the VM GPU
shapes are preemptible; the BM.GPU.A10.4 and BM.GPU.A100-v2.8 rows, once marked
preemptible from memory, are not.

Shapes whose part number cannot be tied to a shape from public documentation
(BM.GPU4.8, the V100/P100 generations, B300, GB300, MI355X, RTX PRO 6000) are left
out rather than priced from a guessed part.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from tracker.models import Interconnect

__all__ = ["PREEMPTIBLE_DISCOUNT", "PREEMPTIBLE_RULE", "SHAPES", "OciShape"]

SHAPES_DOC = "https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm"
BM_GPU = f"{SHAPES_DOC}#bm-gpu"
VM_GPU = f"{SHAPES_DOC}#vm-gpu"
PREEMPTIBLE_DOC = "https://docs.oracle.com/en-us/iaas/Content/Compute/Concepts/preemptible.htm"
PREEMPTIBLE_DISCOUNT = Decimal("0.5")
PREEMPTIBLE_RULE = f"preemptible capacity is billed at 50% of on-demand ({PREEMPTIBLE_DOC})"


@dataclass(frozen=True)
class OciShape:
    name: str
    gpu: str
    """The GPU as the catalog spells it (resolved through tracker.catalog)."""
    gpu_count: int
    vram_gib: Decimal | None
    ocpus: int
    arm: bool
    memory_gb: int
    part_number: str
    """Price-list part billed per GPU-hour for this shape."""
    interconnect: Interconnect
    preemptible: bool
    source: str

    @property
    def vcpus(self) -> Decimal:
        return Decimal(self.ocpus if self.arm else self.ocpus * 2)


def _shape(
    name: str,
    gpu: str,
    count: int,
    vram: int | None,
    ocpus: int,
    memory: int,
    part: str,
    *,
    arm: bool = False,
    preemptible: bool = False,
    link: Interconnect = Interconnect.NVLINK,
) -> OciShape:
    vram_gib = Decimal(vram) if vram is not None else None
    source = VM_GPU if name.startswith("VM.") else BM_GPU
    return OciShape(name, gpu, count, vram_gib, ocpus, arm, memory, part, link, preemptible, source)


_PCIE, _OTHER = Interconnect.PCIE, Interconnect.UNKNOWN

SHAPES: dict[str, OciShape] = {
    s.name: s
    for s in (
        _shape("BM.GPU.H100.8", "H100 SXM", 8, 80, 112, 2048, "B98415"),
        _shape("BM.GPU.H200.8", "H200", 8, 141, 112, 3072, "B110519"),
        _shape("BM.GPU.B200.8", "B200", 8, 180, 128, 4096, "B110978"),
        # Grace-Blackwell: 2 Grace CPUs (Arm), 4 Blackwell GPUs per node.
        _shape("BM.GPU.GB200.4", "GB200", 4, None, 144, 960, "B110979", arm=True),
        _shape("BM.GPU.A100-v2.8", "A100-80GB", 8, 80, 128, 2048, "B95907"),
        _shape("BM.GPU.L40S.4", "L40S", 4, 48, 112, 1024, "B109479", link=_PCIE),
        # AMD Infinity Fabric links the MI300X, not NVLink.
        _shape("BM.GPU.MI300X.8", "MI300X", 8, 192, 112, 2048, "B109485", link=_OTHER),
        _shape("BM.GPU.A10.4", "A10", 4, 24, 64, 1024, "B95909", link=_PCIE),
        _shape("VM.GPU.A10.1", "A10", 1, 24, 15, 240, "B95909", preemptible=True, link=_PCIE),
        _shape("VM.GPU.A10.2", "A10", 2, 24, 30, 480, "B95909", preemptible=True, link=_PCIE),
    )
}
