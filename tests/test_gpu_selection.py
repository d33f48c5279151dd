"""Issue 10 item 9: the one rule for a GPU name a person types in a filter."""

from __future__ import annotations

from typing import Any

import pytest

from tracker.catalog import GpuSelection, gpu_models_for, select_gpus
from tracker.catalog.loader import build_catalog


def row(name: str, vram: int, aliases: list[str] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "vendor": "NVIDIA",
        "kind": "gpu",
        "architecture": "Test",
        "form_factor": "SXM",
        "source": "https://example.com/datasheet.pdf",
        "year": 2024,
        "vram_gib": vram,
        "nvlink": True,
        "aliases": aliases or [],
    }


# A family of two parts told apart by memory, a PCIe card named <family>-<variant>,
# and an unrelated model whose name starts with the same letters.
SMALL = build_catalog(
    {
        "gpu": [
            row("X100-40GB", 40),
            row("X100-80GB", 80),
            row("X100-PCIE", 80, ["X100 PCIe"]),
            row("X1000", 24),
            row("T9", 16, ["Tesla T9"]),
            row("Y200", 141),
            row("Y200-NVL", 141),
        ],
        "family": [
            {
                "aliases": ["X100", "nvidia-tesla-x100", "X100-SXM"],
                "members": ["X100-40GB", "X100-80GB"],
                "default": "X100-40GB",
                "default_reason": "a test",
            }
        ],
    },
    "test catalog",
)


@pytest.mark.parametrize(
    ("typed", "models"),
    [
        # the family's own name (vendor words aside): both members and the X100-<variant> card
        ("X100", ("X100-40GB", "X100-80GB", "X100-PCIE")),
        ("x100", ("X100-40GB", "X100-80GB", "X100-PCIE")),
        ("nvidia-tesla-x100", ("X100-40GB", "X100-80GB", "X100-PCIE")),
        # a spelling that names the SXM parts only: the members, not the PCIe card
        ("X100-SXM", ("X100-40GB", "X100-80GB")),
        # a memory size picks the one member it fits (80 within 10 % of 80 GiB)
        ("x100 80gb", ("X100-80GB",)),
        # a canonical name in any case, and a model's alias: that model only
        ("x100-pcie", ("X100-PCIE",)),
        ("X100 PCIe", ("X100-PCIE",)),
        ("Tesla T9", ("T9",)),
        ("X1000", ("X1000",)),
        # a bare canonical name also means its <name>-<variant> models, a full one only itself
        ("y200", ("Y200", "Y200-NVL")),
        ("Y200-nvl", ("Y200-NVL",)),
        ("X100-40GB", ("X100-40GB",)),
        # names the catalog does not know
        ("X100 200GB", ()),
        ("Quantum Flux 9000", ()),
    ],
)
def test_a_typed_name_selects_models_by_the_catalog(typed: str, models: tuple[str, ...]) -> None:
    assert gpu_models_for(typed, catalog=SMALL) == models


def test_the_packaged_catalog_answers_the_issues_examples() -> None:
    # gpus.toml: [[family]] H100 = H100-SXM, H100-NVL; the H100-PCIE row is H100-<variant>
    assert gpu_models_for("H100") == ("H100-SXM", "H100-PCIE", "H100-NVL")
    assert gpu_models_for("h100-sxm") == ("H100-SXM",)
    # H200 is both the SXM part's name and the base of H200-NVL
    assert gpu_models_for("H200") == ("H200", "H200-NVL")
    # [[family]] A100 = A100-40GB, A100-80GB; 80 GB fits A100-80GB (80 GiB) only
    assert gpu_models_for("a100 80gb") == ("A100-80GB",)
    assert set(gpu_models_for("V100")) == {
        "V100-16GB",
        "V100-32GB",
        "V100-PCIE-16GB",
        "V100-PCIE-32GB",
    }


def test_a_selection_matches_models_exactly_and_unknown_names_as_stored() -> None:
    selection = select_gpus(["X100", " ", "Quantum Flux 9000", "x100-pcie"], catalog=SMALL)
    assert selection == GpuSelection(
        models=("X100-40GB", "X100-80GB", "X100-PCIE"), names=("quantum flux 9000",)
    )
    assert selection.matches("X100-80GB")
    assert not selection.matches("X1000")
    # an unrecognised GPU is stored under its raw spelling, flagged unknown
    assert selection.matches("QUANTUM FLUX 9000")
    assert selection.matches("QF9000", gpu_raw_name="Quantum Flux 9000")
    assert not select_gpus([], catalog=SMALL)
