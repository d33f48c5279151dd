"""The two records the catalog hands out: a datasheet row and a name-resolution result.

Kept apart from the loader so collectors and the recommender can type against them
without pulling in TOML parsing.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

__all__ = ["GpuMatch", "GpuSpec"]


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One canonical GPU or accelerator with DENSE datasheet figures.

    Throughput figures are per GPU (per die for dual-GPU boards such as K80/M60,
    per GPU of a superchip or rack, per chip for Inferentia/Trainium/TPU), without
    structured sparsity. A figure the vendor does not publish is ``None`` rather
    than estimated. ``fp16_tflops``/``bf16_tflops``/``fp8_tflops``/``int8_tops`` are
    matrix-unit rates (tensor cores, matrix cores, MME, MXU) with FP32 accumulate, so
    the recommender compares like with like; a part without a matrix unit (P100) has
    none, and its note gives the vector FP16 rate instead.
    ``nvlink`` is true when the datasheet offers NVLink (SXM or bridge) for the part;
    whether a given cloud shape wires it up is the offer's ``interconnect``.
    ``chip_link`` names a vendor's own chip-to-chip link that joins every chip of a
    multi-chip instance of the part (``NeuronLink-v2`` on Trainium1 and Inferentia2,
    ``ICI`` on TPUs), empty where the datasheet names none: such a box shards training
    state like an NVLink one.
    ``note`` records how a figure was derived (halved sparse number, per-die split)
    or why one is absent.
    """

    name: str
    vendor: str
    kind: str
    architecture: str
    year: int
    vram_gib: Decimal
    memory_bandwidth_gbs: Decimal | None
    fp32_tflops: Decimal | None
    fp16_tflops: Decimal | None
    bf16_tflops: Decimal | None
    fp8_tflops: Decimal | None
    int8_tops: Decimal | None
    nvlink: bool
    form_factor: str
    source: str
    aliases: tuple[str, ...]
    note: str = ""
    chip_link: str = ""


@dataclass(frozen=True, slots=True)
class GpuMatch:
    """Result of mapping a provider's GPU spelling onto the catalog.

    When ``known`` is false, ``name`` is the raw spelling unchanged and ``spec`` is
    ``None``: the offer is kept and flagged, never guessed. ``reason`` says why a
    name was not matched (empty when it was).
    """

    raw: str
    name: str
    known: bool
    spec: GpuSpec | None
    reason: str = ""
