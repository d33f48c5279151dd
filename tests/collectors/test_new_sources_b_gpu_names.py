"""Every GPU spelling in the novita/lium/mithril/latitude/ibm fixtures resolves in the catalog, or is knowingly
unknown (issue 43, point 4): a new spelling in a recorded payload fails here first."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from collectors.ibm_parse import GPUS, PROFILE_NAME
from tracker.catalog import resolve_gpu

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _names(provider: str, file: str, items: str, field: str) -> set[str]:
    body = json.loads((FIXTURES / provider / file).read_text())
    return {str(item[field]) for item in (body[items] if items else body)}


NAMES = {
    # spelling sent -> the catalog model it must resolve to (None: knowingly unknown)
    ("novita", "RTX 4090 24GB"): "RTX-4090",
    ("novita", "A100 SXM 80GB"): "A100-80GB",
    ("lium", "RTX 5090"): "RTX-5090",
    ("lium", "H200"): "H200",
    ("lium", "A100-SXM4-80GB"): "A100-80GB",
    ("mithril", "H100"): "H100-SXM",  # gpu_memory_gb 80, gpu_socket SXM5
    ("latitude", "H100"): "H100-SXM",  # vram_per_gpu 80
    # ibm: the GPU suffix of a profile name, read as IBM's profile docs describe it (GPUS)
    ("ibm", "h100"): "H100-SXM",  # "HGX design", H100 SXM5 80 GB
    ("ibm", "l4"): "L4",
    ("ibm", "v100"): "V100-PCIE-16GB",  # "NVIDIA V100 PCIe 16 GB" (gx2: composite, skipped)
}

FILES = {
    "novita": ("products.json", "data", "name"),
    "lium": ("nodes.json", "nodes", "gpu_model"),
    "mithril": ("instance_types.json", "", "gpu_type"),
}


def _latitude_names() -> set[str]:
    body = json.loads((FIXTURES / "latitude" / "plans_gpu.json").read_text())
    specs = [plan["attributes"]["specs"].get("gpu") or {} for plan in body["data"]]
    return {str(gpu["type"]) for gpu in specs if gpu}


def _ibm_names() -> set[str]:
    body = json.loads((FIXTURES / "ibm" / "profiles.json").read_text())
    shapes = [PROFILE_NAME.match(e["name"]) for e in body["resources"]]
    return {shape["gpu"] for shape in shapes if shape}


def test_the_table_lists_every_ibm_spelling() -> None:
    assert _ibm_names() == {name for p, name in NAMES if p == "ibm"}


def test_the_table_lists_every_latitude_spelling() -> None:
    assert _latitude_names() == {name for p, name in NAMES if p == "latitude"}


@pytest.mark.parametrize("provider", sorted(FILES))
def test_the_table_lists_every_spelling_in_the_fixtures(provider: str) -> None:
    listed = {name for p, name in NAMES if p == provider}
    assert _names(provider, *FILES[provider]) == listed


@pytest.mark.parametrize(("key", "model"), sorted(NAMES.items()))
def test_spelling_resolves(key: tuple[str, str], model: str | None) -> None:
    vram = Decimal(80) if key[0] in ("mithril", "latitude") else None  # the fixtures' memory
    match = resolve_gpu(*GPUS[key[1]]) if key[0] == "ibm" else resolve_gpu(key[1], vram)
    assert (match.name if match.known else None) == model
