"""How the GPUs of a Huawei Cloud flavor family are attached, where the flavor's own
text does not say.

``info:gpu:name`` names the card the same way for every V100 family ("NVIDIA V100"),
and the catalog's bare ``V100`` is the SXM2 (NVLink) part, as AWS and GCP use the
name. Huawei sells both: its GPU-accelerated ECS documentation lists, per family, the
"GPU Connection" and the per-card figures that tell the two apart (the PCIe card's
14 TFLOPS FP32 / 112 tensor TFLOPS against the SXM2 card's 15.7 / 125):

- ``p2s``: "1 x V100 | PCIe Gen3 | 1 x 32 GiB", "14 TFLOPS of single-precision", "112 TFLOPS"
- ``p2``:  V100 16 GiB, "14 TFLOPS of single-precision ... 112 TFLOPS of deep learning"
- ``p2v``: "GPU NVLink for direct communication between GPUs", "15.7 TFLOPS", "125 TFLOPS"

Source: the Huawei Cloud ECS "GPU-accelerated ECSs" page as republished for Huawei's
Open Telekom Cloud stack (same flavor names), ``opentelekomcloud-docs/elastic-cloud-server``
``umn/source/service_overview/ecs_specifications_and_types/gpu-accelerated_ecss.rst``.
A family not listed here keeps the name as the flavor gives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tracker.models import Interconnect

__all__ = ["FAMILY_DOC", "HuaweiFamily", "catalog_spelling", "family_of"]

FAMILY_DOC = (
    "https://github.com/opentelekomcloud-docs/elastic-cloud-server/blob/main/umn/source/"
    "service_overview/ecs_specifications_and_types/gpu-accelerated_ecss.rst"
)


@dataclass(frozen=True, slots=True)
class HuaweiFamily:
    form: str
    """How the catalog spells the card's form factor ("PCIe"; "" for the default SXM2)."""
    interconnect: Interconnect


FAMILIES: Mapping[str, HuaweiFamily] = {
    "p2": HuaweiFamily("PCIe", Interconnect.PCIE),
    "p2s": HuaweiFamily("PCIe", Interconnect.PCIE),
    "p2v": HuaweiFamily("", Interconnect.NVLINK),
}


def family_of(generation: str) -> HuaweiFamily | None:
    """The documented family of an ``ecs:generation`` (``p2s``), or None."""
    return FAMILIES.get(generation.strip().lower())


def catalog_spelling(gpu_name: str, generation: str) -> str:
    """``gpu_name`` with the family's form factor when the flavor's text lacks it:
    ``NVIDIA V100`` of a ``p2s`` flavor is looked up as ``NVIDIA V100 PCIe``."""
    family = family_of(generation)
    if family is None or not family.form or family.form.lower() in gpu_name.lower():
        return gpu_name
    return f"{gpu_name} {family.form}"
