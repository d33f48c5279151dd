"""GPU catalog: alias resolution, memory disambiguation, datasheet spot checks, loader checks."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tracker.catalog import (
    DATA_FILE,
    CatalogError,
    all_specs,
    get_spec,
    load_catalog,
    normalize_gpu_name,
    resolve_gpu,
)

AWS_GPU_ITEMS = (
    Path(__file__).parent / "fixtures" / "catalog" / "ec2_instance_types_items_moto_gpu_subset.json"
)

# (provider spelling, memory hint GiB or None, expected canonical name)
PROVIDER_SPELLINGS = [
    # GCP Compute Engine accelerator types
    ("nvidia-tesla-a100", None, "A100-40GB"),
    ("nvidia-tesla-a100", 80, "A100-80GB"),
    ("nvidia-a100-80gb", None, "A100-80GB"),
    ("nvidia-h100-80gb", None, "H100-SXM"),
    ("nvidia-h100-mega-80gb", None, "H100-SXM"),
    ("nvidia-h200-141gb", None, "H200"),
    ("nvidia-l4", None, "L4"),
    ("nvidia-tesla-t4", None, "T4"),
    ("nvidia-tesla-v100", None, "V100-16GB"),
    ("nvidia-tesla-p100", None, "P100"),
    ("nvidia-tesla-p4", None, "P4"),
    ("nvidia-tesla-k80", None, "K80"),
    # nvidia-smi names (RunPod / Vast / Lambda report these)
    ("A100-SXM4-80GB", None, "A100-80GB"),
    ("NVIDIA A100-SXM4-80GB", None, "A100-80GB"),
    ("NVIDIA A100-SXM4-40GB", None, "A100-40GB"),
    ("NVIDIA A100 80GB PCIe", None, "A100-80GB-PCIE"),
    ("NVIDIA A100-PCIE-40GB", None, "A100-40GB-PCIE"),
    ("Tesla V100-SXM2-32GB", None, "V100-32GB"),
    ("Tesla V100-SXM2-16GB", None, "V100-16GB"),
    ("Tesla V100-PCIE-16GB", None, "V100-PCIE-16GB"),
    ("Tesla T4", None, "T4"),
    ("NVIDIA H100 80GB HBM3", None, "H100-SXM"),
    ("NVIDIA H100 PCIe", None, "H100-PCIE"),
    ("NVIDIA H100 NVL", None, "H100-NVL"),
    ("NVIDIA GeForce RTX 4090", None, "RTX-4090"),
    ("RTX 4090", None, "RTX-4090"),
    ("NVIDIA GeForce RTX 3090", None, "RTX-3090"),
    ("RTX 3090", None, "RTX-3090"),
    ("NVIDIA RTX A6000", None, "RTX-A6000"),
    ("RTX A6000", None, "RTX-A6000"),
    ("NVIDIA RTX A4000", None, "RTX-A4000"),
    ("RTX A4000", None, "RTX-A4000"),
    ("NVIDIA L40S", None, "L40S"),
    ("NVIDIA L40", None, "L40"),
    ("NVIDIA A40", None, "A40"),
    ("NVIDIA A10", None, "A10"),
    # AWS DescribeInstanceTypes GpuInfo.Gpus[].Name (+ MemoryInfo.SizeInMiB / 1024)
    ("A100", 40, "A100-40GB"),
    ("A100", 80, "A100-80GB"),
    ("H100", 80, "H100-SXM"),
    ("H200", Decimal("140.4"), "H200"),
    ("A10G", Decimal("22.3515625"), "A10G"),
    ("T4", 16, "T4"),
    ("T4g", 16, "T4G"),
    ("L4", Decimal("22.3515625"), "L4"),
    ("L40S", Decimal("44.703125"), "L40S"),
    ("V100", 16, "V100-16GB"),
    ("V100", 32, "V100-32GB"),
    ("K80", 12, "K80"),
    ("M60", 8, "M60"),
    ("B200", Decimal("179.0615234375"), "B200"),
    ("Radeon Pro V520", 8, "Radeon-Pro-V520"),
    # AWS Neuron / Inference accelerator names
    ("Inferentia", 8, "Inferentia1"),
    ("Inferentia2", 32, "Inferentia2"),
    ("Trainium", 32, "Trainium1"),
    ("Trainium2", 96, "Trainium2"),
    # Azure-style
    ("A100 80GB", None, "A100-80GB"),
    ("H100 NVL", None, "H100-NVL"),
    ("H100", 94, "H100-NVL"),
    # Others
    ("AMD Instinct MI300X", 192, "MI300X"),
    ("Intel Gaudi 2", 96, "Gaudi2"),
    ("GH200", None, "GH200-96GB"),
    ("GH200", 144, "GH200-144GB"),
    ("tpu-v5-lite-podslice", None, "TPU-v5e"),
    ("TPU v5p", None, "TPU-v5p"),
]


@pytest.mark.parametrize(("raw", "hint", "expected"), PROVIDER_SPELLINGS)
def test_provider_spellings_resolve(raw: str, hint: Decimal | int | None, expected: str) -> None:
    match = resolve_gpu(raw, hint)
    assert match.known, match.reason
    assert match.name == expected
    assert match.raw == raw
    assert match.spec is not None and match.spec.name == expected


def test_every_canonical_name_resolves_to_itself() -> None:
    for spec in all_specs():
        assert resolve_gpu(spec.name).name == spec.name
        assert resolve_gpu(spec.name.lower()).name == spec.name
        assert resolve_gpu(spec.name, spec.vram_gib).name == spec.name


def test_every_listed_alias_resolves_to_its_model_or_family() -> None:
    for spec in all_specs():
        for alias in spec.aliases:
            match = resolve_gpu(alias, spec.vram_gib)
            assert match.name == spec.name, (alias, match.reason)


def test_aws_fixture_gpu_names_all_resolve() -> None:
    """Every GPU in the captured DescribeInstanceTypes items is known, using its memory."""
    items = json.loads(AWS_GPU_ITEMS.read_text())
    seen = {}
    for instance_type, info in items.items():
        for gpu in (info.get("GpuInfo") or {}).get("Gpus", []):
            hint = Decimal(gpu["MemoryInfo"]["SizeInMiB"]) / 1024
            match = resolve_gpu(gpu["Name"], hint)
            assert match.known, (instance_type, gpu["Name"], match.reason)
            seen[instance_type] = match.name
    assert seen["p4d.24xlarge"] == "A100-40GB"
    assert seen["p5.48xlarge"] == "H100-SXM"
    assert seen["g5g.xlarge"] == "T4G"
    assert seen["g4ad.xlarge"] == "Radeon-Pro-V520"


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        ("A100", 60),  # between 40 and 80: fits neither variant within 10 %
        ("V100", 24),
        ("nvidia-tesla-a100", 48),
        ("A100-SXM4-80GB", 40),  # name and hint contradict each other
        ("T4", 8),  # a single model contradicted by memory
        ("A10", 4),  # a fractional share's memory is not the GPU's
        ("A100 PCIe", None),  # family without a default and no memory evidence
        ("V100 PCIe", None),
    ],
)
def test_memory_that_fits_no_variant_is_unknown(raw: str, hint: int | None) -> None:
    match = resolve_gpu(raw, hint)
    assert not match.known
    assert match.name == raw
    assert match.spec is None
    assert match.reason


@pytest.mark.parametrize(
    "raw",
    [
        "NVIDIA RTX 6000 Ada Generation",
        "Quadro RTX 8000",
        "MI250X",
        "Gaudi",
        "A100 1g.10gb",  # MIG slice
        "H100-SXM5-80GB-XYZ",
        "",
        "   ",
        "NVIDIA",
        "80GB",
        "gpu",
    ],
)
def test_unknown_names_round_trip(raw: str) -> None:
    match = resolve_gpu(raw)
    assert match.known is False
    assert match.name == raw
    assert match.raw == raw
    assert match.spec is None


def test_hint_within_ten_percent_fits_and_beyond_does_not() -> None:
    assert resolve_gpu("L4", Decimal("21.7")).known  # 24 * 0.9 = 21.6
    assert not resolve_gpu("L4", Decimal("21.5")).known
    assert resolve_gpu("L4", Decimal("26.4")).known
    assert not resolve_gpu("L4", Decimal("26.5")).known


def test_float_hint_is_accepted_and_bad_hints_are_rejected() -> None:
    assert resolve_gpu("A100", 80.0).name == "A100-80GB"
    with pytest.raises(ValueError, match="memory_hint"):
        resolve_gpu("A100", 0)
    with pytest.raises(ValueError, match="memory_hint"):
        resolve_gpu("A100", -40)
    with pytest.raises(ValueError, match="memory_hint"):
        resolve_gpu("A100", float("nan"))


def test_normalisation_strips_vendor_words_punctuation_and_memory() -> None:
    assert normalize_gpu_name("NVIDIA A100-SXM4-80GB").key == "a100sxm4"
    assert normalize_gpu_name("NVIDIA A100-SXM4-80GB").memory_gib == 80
    assert normalize_gpu_name("Tesla V100-PCIE-16GB").key == "v100pcie"
    assert normalize_gpu_name("NVIDIA GeForce RTX 4090").key == "rtx4090"
    assert normalize_gpu_name("A100 80 GB").memory_gib == 80
    assert normalize_gpu_name("nvidia-h200-141gb").memory_gib == 141
    assert normalize_gpu_name("NVIDIA H100 80GB HBM3").key == "h100"


# --- datasheet spot checks (dense figures, by hand from the cited datasheets) ---


def test_h100_sxm_dense_figures() -> None:
    spec = get_spec("H100-SXM")
    assert spec.bf16_tflops is not None and abs(spec.bf16_tflops - 989) <= 1
    assert spec.fp8_tflops is not None and abs(spec.fp8_tflops - 1979) <= 1
    assert spec.memory_bandwidth_gbs == 3350
    assert spec.vram_gib == 80
    assert spec.nvlink is True


def test_a100_dense_bf16_and_memory_variants() -> None:
    for name in ("A100-40GB", "A100-80GB", "A100-40GB-PCIE", "A100-80GB-PCIE"):
        assert get_spec(name).bf16_tflops == 312
        assert get_spec(name).fp8_tflops is None  # Ampere has no FP8
    assert get_spec("A100-40GB").memory_bandwidth_gbs == 1555
    assert get_spec("A100-80GB").memory_bandwidth_gbs == 2039
    assert get_spec("A100-80GB-PCIE").memory_bandwidth_gbs == 1935


def test_other_spot_checks() -> None:
    assert get_spec("A10G").vram_gib == 24
    assert get_spec("A10G").bf16_tflops is None  # not published: absent, not copied from A10
    assert get_spec("L4").bf16_tflops == Decimal("121")  # datasheet 242 with sparsity
    assert get_spec("L40S").fp8_tflops == 733  # datasheet 1,466 with sparsity
    assert get_spec("T4").fp16_tflops == 65 and get_spec("T4").bf16_tflops is None
    assert get_spec("V100-32GB").fp16_tflops == 125
    assert get_spec("MI300X").bf16_tflops == Decimal("1307.4")
    assert get_spec("Inferentia2").bf16_tflops == 190
    assert get_spec("Trainium2").bf16_tflops == 667
    assert get_spec("TPU-v5e").bf16_tflops == 197
    assert get_spec("K80").vram_gib == 12  # per die, as clouds count it


def test_catalog_covers_required_models_with_sources() -> None:
    names = {spec.name for spec in all_specs()}
    required = {
        "K80", "M60", "P4", "P100", "V100-16GB", "V100-32GB", "T4", "T4G", "A10", "A10G",
        "L4", "L40", "L40S", "A40", "RTX-A6000", "RTX-4090", "RTX-3090", "RTX-A4000",
        "A100-40GB", "A100-80GB", "A100-80GB-PCIE", "H100-SXM", "H100-PCIE", "H100-NVL",
        "H200", "B200", "GH200-96GB", "MI300X", "Radeon-Pro-V520", "Gaudi2", "Inferentia1",
        "Inferentia2", "Trainium1", "Trainium2", "TPU-v5e", "TPU-v5p",
    }  # fmt: skip
    assert required <= names
    for spec in all_specs():
        assert spec.source.startswith("https://"), spec.name
        assert spec.kind in {"gpu", "accelerator"}
    accelerators = {s.name for s in all_specs() if s.kind == "accelerator"}
    assert {"Inferentia1", "Inferentia2", "Trainium1", "Trainium2", "Gaudi2"} <= accelerators
    assert "MI300X" not in accelerators


def test_get_spec_rejects_aliases_and_unknown_names() -> None:
    with pytest.raises(KeyError, match="nvidia-tesla-t4"):
        get_spec("nvidia-tesla-t4")
    with pytest.raises(KeyError):
        get_spec("A100")


# --- loader validation ---

GOOD_ROW = """
[[gpu]]
name = "X1"
vendor = "NVIDIA"
kind = "gpu"
architecture = "Test"
year = 2024
vram_gib = 16
memory_bandwidth_gbs = 300
nvlink = false
form_factor = "PCIe"
source = "https://example.com/x1.pdf"
aliases = ["X-1"]
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gpus.toml"
    path.write_text(text)
    return path


def test_loader_accepts_a_minimal_good_file(tmp_path: Path) -> None:
    catalog = load_catalog(_write(tmp_path, GOOD_ROW))
    assert resolve_gpu("NVIDIA X-1", catalog=catalog).name == "X1"
    assert resolve_gpu("A100", catalog=catalog).known is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            GOOD_ROW.replace("vram_gib = 16\n", ""),
            r"gpu\[0\] \('X1'\): missing required field 'vram_gib'",
        ),
        (GOOD_ROW.replace("vram_gib = 16", "vram_gib = 0"), r"'X1'.*vram_gib must be a positive"),
        (
            GOOD_ROW.replace("memory_bandwidth_gbs = 300", "memory_bandwidth_gbs = -3"),
            r"'X1'.*memory_bandwidth_gbs",
        ),
        (GOOD_ROW.replace("vram_gib = 16", 'vram_gib = "16"'), r"'X1'.*vram_gib must be a number"),
        (GOOD_ROW.replace('kind = "gpu"', 'kind = "tpu"'), r"'X1'.*kind must be one of"),
        (GOOD_ROW.replace("https://example.com/x1.pdf", "example.com"), r"'X1'.*source"),
        (GOOD_ROW.replace("nvlink = false", "nv_link = false"), r"'X1'.*unknown field"),
        (GOOD_ROW.replace("year = 2024", "year = 24.5"), r"'X1'.*year"),
        (GOOD_ROW + GOOD_ROW, r"gpu\[1\] \('X1'\): duplicate name"),
        (
            GOOD_ROW + GOOD_ROW.replace('"X1"', '"X2"').replace('"X-1"', '"x 1"'),
            r"gpu\[1\] \('X2'\): alias 'x 1' .*already claimed by 'X1'",
        ),
        (GOOD_ROW.replace('["X-1"]', '["X-1 16GB"]'), r"'X1'.*states a memory size"),
        (
            GOOD_ROW + '\n[[family]]\naliases = ["X"]\nmembers = ["X1", "X9"]\n',
            r"family\[0\].*'X9'",
        ),
        ("[[gpu]\nname = ", r"not valid TOML"),
        ("", r"no \[\[gpu\]\] rows"),
    ],
)
def test_loader_rejects_malformed_file_naming_the_row(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(CatalogError, match=message):
        load_catalog(_write(tmp_path, text))


def test_loader_reports_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot read"):
        load_catalog(tmp_path / "missing.toml")


def test_packaged_data_file_loads() -> None:
    catalog = load_catalog(DATA_FILE)
    assert len(catalog.specs) == len(all_specs())
