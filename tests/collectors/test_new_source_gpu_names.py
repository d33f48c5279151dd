"""Issue 43: every GPU spelling in the new sources' fixtures resolves in the catalog, or is
knowingly unknown (kept raw and flagged), so a new alias never goes missing unnoticed."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tracker.catalog import resolve_gpu

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# (spelling, memory per GPU as the fixture sends it) -> canonical name, or None if unknown
EXPECTED: dict[tuple[str, Decimal | None], str | None] = {
    # shadeform: the OpenAPI example pairs "A100" with 48 GB, which is no A100
    ("A100", Decimal(48)): None,
    # primeintellect: gpuType read with its socket (both documented offers are PCIe cards)
    ("H100_80GB PCIe", Decimal(80)): "H100-PCIE",
    # hyperstack: flavor GPUs and pricebook names (no memory field; the name carries it)
    ("H100-80G-PCIe", None): "H100-PCIE",
    ("H200-141G-SXM5", None): "H200",
    ("RTX-A4000", None): "RTX-A4000",
    # fluidstack: gpu_type names carry socket and memory; the memory is read from the suffix
    ("RTX_A5000_24GB", Decimal(24)): "RTX-A5000",
    ("H100_PCIE_80GB", Decimal(80)): "H100-PCIE",
    # hyperbolic: hardware.gpus[].model with its ram in MiB, read as GiB (81559 / 1024)
    ("NVIDIA-H100-80GB-HBM3", Decimal("79.6474609375")): "H100-SXM",
    ("NVIDIA-GeForce-RTX-4090", Decimal("23.98828125")): "RTX-4090",
    ("NVIDIA-A100-SXM4-80GB", Decimal(80)): "A100-80GB",
    # spheron: gpuType with gpu_memory (GB per GPU); "B300 SXM6" is a catalog alias for it
    ("H100_PCIE", Decimal(80)): "H100-PCIE",
    ("B300_SXM6", Decimal(262)): "B300",
    ("B200_SXM6", Decimal(180)): "B200",
}


def shadeform_names() -> set[tuple[str, Decimal | None]]:
    body = json.loads((FIXTURES / "shadeform" / "instance_types.json").read_text())
    return {
        (t["configuration"]["gpu_type"], Decimal(t["configuration"]["vram_per_gpu_in_gb"]))
        for t in body["instance_types"]
    }


def primeintellect_names() -> set[tuple[str, Decimal | None]]:
    body = json.loads((FIXTURES / "primeintellect" / "availability_gpus.json").read_text())
    return {
        (f"{o['gpuType']} {o['socket']}", Decimal(o["gpuMemory"]) / o["gpuCount"])
        for o in body["items"]
    }


def hyperstack_names() -> set[tuple[str, Decimal | None]]:
    flavors = json.loads((FIXTURES / "hyperstack" / "flavors.json").read_text())
    pricebook = json.loads((FIXTURES / "hyperstack" / "pricebook.json").read_text())
    gpus = {f["gpu"] for group in flavors["data"] for f in group["flavors"] if f["gpu"]}
    return {(name, None) for name in gpus | {entry["name"] for entry in pricebook}}


def fluidstack_names() -> set[tuple[str, Decimal | None]]:
    body = json.loads((FIXTURES / "fluidstack" / "list_available_configurations.json").read_text())
    return {(c["gpu_type"], Decimal(c["gpu_type"].rsplit("_", 1)[1][:-2])) for c in body}


def hyperbolic_names() -> set[tuple[str, Decimal | None]]:
    body = json.loads((FIXTURES / "hyperbolic" / "marketplace.json").read_text())
    gpus = [gpu for node in body["instances"] for gpu in node["hardware"]["gpus"]]
    return {(gpu["model"], Decimal(gpu["ram"]) / 1024) for gpu in gpus}


def spheron_names() -> set[tuple[str, Decimal | None]]:
    names: set[tuple[str, Decimal | None]] = set()
    for page in sorted((FIXTURES / "spheron").glob("gpu_offers_page_*.json")):
        for group in json.loads(page.read_text())["data"]:
            names |= {(group["gpuType"], Decimal(o["gpu_memory"])) for o in group["offers"]}
    return names


def fixture_names() -> set[tuple[str, Decimal | None]]:
    return (
        shadeform_names()
        | primeintellect_names()
        | hyperstack_names()
        | fluidstack_names()
        | hyperbolic_names()
        | spheron_names()
    )


def test_every_fixture_spelling_is_listed() -> None:
    assert fixture_names() == set(EXPECTED)


@pytest.mark.parametrize(("spelling", "expected"), sorted(EXPECTED.items(), key=str))
def test_spelling_resolves_or_is_knowingly_unknown(
    spelling: tuple[str, Decimal | None], expected: str | None
) -> None:
    match = resolve_gpu(*spelling)
    assert (match.name, match.known) == ((expected, True) if expected else (spelling[0], False))
