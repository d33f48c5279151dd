"""Cloud TPU slices on Compute Engine, priced from the same Billing Catalog as the GPUs.

A TPU SKU prices one chip-hour with its host VM included ("TpuV5e running in Delhi"),
so a slice's hourly price is its chip count times the chip price, nothing else. The
slices are the ones Google sells on one host, from its published tables:

* v5e: https://cloud.google.com/tpu/docs/v5e ("VM types": 1, 4 or 8 chips per VM;
  vCPUs and memory per VM as there, and as dstackai/gpuhunt's ``TPU_HARDWARE_SPECS``);
* v6e: https://cloud.google.com/tpu/docs/v6e ("Supported configurations": ct6e-standard-
  1t/4t/8t; "VM types" for vCPUs and memory);
* v5p and TPU7x: https://cloud.google.com/tpu/docs/tpu7x (the comparison table: a 4-chip
  VM has 208 vCPUs / 448 GB on v5p and 224 / 960 on TPU7x; ICI per chip).

Larger slices span several such hosts joined by the same inter-chip interconnect, so each
offer states ``fabric = ici`` and the host's ICI bandwidth: the cluster model sizes a
multi-host slice as N hosts over that fabric rather than as a separate offer.
``network_gbps`` is chips x the per-chip ICI bandwidth in one direction (Google prints
it bidirectional: 1,200 GB/s on v5p and TPU7x, 800 GB/s on v6e, 400 GB/s on v5e, i.e.
4,800 / 3,200 / 1,600 Gbit/s each way), the per-instance aggregate as EFA's is.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from collectors.base import term_attributes
from tracker.catalog import resolve_gpu
from tracker.models import Fabric, Interconnect, Offer, PricingModel

__all__ = ["TPU_SLICES", "TpuSlice", "tpu_offer"]

PROVIDER = "gcp"


@dataclass(frozen=True)
class TpuSlice:
    """One single-host TPU slice as Compute Engine sells it."""

    version: str
    """The TPU version key the SKU classifier gives (``v5e``, ``v5p``, ``v6e``, ``tpu7x``)."""
    machine_type: str
    """The Compute Engine / GKE machine type (the offer's ``instance_type``)."""
    accelerator_type: str
    """The Cloud TPU API accelerator type (``gcloud ... --accelerator-type``)."""
    catalog_name: str
    chips: int
    hbm_gib_per_chip: Decimal
    vcpus: int
    memory_gib: Decimal
    ici_gbps_per_chip: Decimal
    """Inter-chip interconnect bandwidth of one chip, one direction, Gbit/s."""

    @property
    def network_gbps(self) -> Decimal:
        return self.chips * self.ici_gbps_per_chip


def _v5e(chips: int, vcpus: int, memory: int) -> TpuSlice:
    return TpuSlice(
        "v5e", f"ct5lp-hightpu-{chips}t", f"v5litepod-{chips}", "TPU v5e", chips,
        Decimal(16), vcpus, Decimal(memory), Decimal(1600),
    )  # fmt: skip


def _v6e(chips: int, vcpus: int, memory: int) -> TpuSlice:
    return TpuSlice(
        "v6e", f"ct6e-standard-{chips}t", f"v6e-{chips}", "TPU v6e", chips,
        Decimal(32), vcpus, Decimal(memory), Decimal(3200),
    )  # fmt: skip


TPU_SLICES: tuple[TpuSlice, ...] = (
    _v5e(1, 24, 48),
    _v5e(4, 112, 192),
    _v5e(8, 224, 384),
    _v6e(1, 44, 176),
    _v6e(4, 180, 720),
    _v6e(8, 180, 1440),
    TpuSlice(
        "v5p", "ct5p-hightpu-4t", "v5p-8", "TPU v5p", 4,
        Decimal(95), 208, Decimal(448), Decimal(4800),
    ),
    TpuSlice(
        "tpu7x", "tpu7x-standard-4t", "tpu7x-8", "TPU7x", 4,
        Decimal(192), 224, Decimal(960), Decimal(4800),
    ),
)  # fmt: skip
"""v5p's smallest slice is 4 chips (``v5p-8`` counts TensorCores); TPU7x is sold only as
4-chip hosts. A 1-chip slice has no ICI link of its own to state: still ``ici`` (it is a
slice of the pod's torus), its interconnect inside the host ``unknown``."""


def tpu_offer(
    tpu: TpuSlice, pricing: PricingModel, region: str, chip_price: Decimal, currency: str, sku: str
) -> Offer:
    """The slice at ``chip_price`` per chip-hour: chips x the chip price, host included."""
    match = resolve_gpu(tpu.catalog_name, tpu.hbm_gib_per_chip)
    total = tpu.chips * chip_price
    attributes: dict[str, str | int | Decimal | bool | None] = {
        "accelerator_type": tpu.accelerator_type,
        "tpu_version": tpu.version,
        "chip_price_per_hour": chip_price,
        "sku_ids": sku,
    }
    if pricing.term_hours is not None:
        # Committed use discounts are billed monthly, with nothing upfront.
        attributes.update(term_attributes(currency, Decimal(0), total))
    return Offer(
        provider=PROVIDER,
        instance_type=tpu.machine_type,
        region=region,
        pricing=pricing,
        price_per_hour=total,
        currency=currency,
        gpu_model=match.name,
        gpu_count=Decimal(tpu.chips),
        gpu_memory_gib=tpu.hbm_gib_per_chip,
        vcpus=Decimal(tpu.vcpus),
        memory_gib=tpu.memory_gib,
        interconnect=Interconnect.GPU_FABRIC if tpu.chips > 1 else Interconnect.UNKNOWN,
        fabric=Fabric.ICI,
        network_gbps=tpu.network_gbps,
        gpu_raw_name=tpu.accelerator_type,
        gpu_known=match.known,
        attributes=attributes,
    )
