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
        "Quadro RTX 8000",
        "MI210",  # a PCIe CDNA 2 card the catalog does not list
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


# --- issue 10 item 17: datasheet figures that disagreed with their own sources ---


def test_l40s_takes_the_dense_column_the_datasheet_prints() -> None:
    # L40S datasheet prints "dense | sparse" pairs: BF16 and FP16 Tensor 362.05 | 733,
    # FP8 and INT8 733 | 1,466. The dense column is the catalog's figure.
    spec = get_spec("L40S")
    assert spec.bf16_tflops == Decimal("362.05")
    assert spec.fp16_tflops == Decimal("362.05")
    assert spec.fp8_tflops == 733 and spec.int8_tops == 733
    assert "sparse rates only" not in spec.note


def test_fp16_is_a_matrix_unit_rate_so_pascal_has_none() -> None:
    # The header defines fp16/bf16 as tensor (matrix-unit) rates. P100's datasheet prints
    # 18.7 TFLOPS half precision on CUDA cores; Pascal has no tensor cores, so the field is
    # absent and the note keeps the vector rate.
    p100 = get_spec("P100")
    assert p100.fp16_tflops is None and p100.bf16_tflops is None
    assert "18.7" in p100.note
    assert p100.fp32_tflops == Decimal("9.3")  # the FP32 figure is unaffected
    for name in ("K80", "M60", "P4"):  # the other parts without tensor cores agree
        spec = get_spec(name)
        assert (spec.fp16_tflops, spec.bf16_tflops, spec.int8_tops) == (None, None, None), name
    # P4's datasheet 22 TOPS INT8 is DP4A on CUDA cores, not a matrix unit: note, not column.
    assert "22 TOPS" in get_spec("P4").note


def test_t4_bandwidth_agrees_with_the_datasheet_it_cites() -> None:
    # t4-tensor-core-datasheet-951643.pdf prints "GPU Memory 16 GB GDDR6, 300 GB/sec".
    spec = get_spec("T4")
    assert spec.source.endswith("t4-tensor-core-datasheet-951643.pdf")
    assert spec.memory_bandwidth_gbs == 300


def test_v100_pcie_is_about_twelve_percent_below_sxm2() -> None:
    # V100 datasheet: SXM2 15.7 FP32 / 125 tensor, PCIe 14 / 112; 125 / 112 = 1.116.
    pcie, sxm2 = get_spec("V100-PCIE-16GB"), get_spec("V100-16GB")
    assert (pcie.vram_gib, pcie.fp32_tflops, pcie.fp16_tflops) == (16, 14, 112)
    assert (sxm2.fp32_tflops, sxm2.fp16_tflops) == (Decimal("15.7"), 125)
    assert pcie.form_factor == "PCIe" and pcie.nvlink is False


# --- issue 10 item 18: spellings real payloads use ---

REAL_SPELLINGS = [
    # Lambda / nvidia-smi: the product name counts the Grace CPU's 480 GB LPDDR5X; the
    # GPU is the 96 GB HBM3 GH200.
    ("NVIDIA GH200 480GB", None, "GH200-96GB"),
    ("NVIDIA GH200 480GB", 96, "GH200-96GB"),
    ("AMD Instinct MI300X OAM", None, "MI300X"),  # RunPod gpuTypes id
    ("AMD Instinct MI300X OAM", 192, "MI300X"),
    ("HL-225", None, "Gaudi2"),  # hl-smi product name of the Gaudi2 card
    ("HL-225", 96, "Gaudi2"),
    # GCP accelerator types sold with an NVIDIA RTX Virtual Workstation licence
    ("nvidia-l4-vws", None, "L4"),
    ("nvidia-tesla-t4-vws", None, "T4"),
    ("nvidia-tesla-p4-vws", None, "P4"),
    ("nvidia-tesla-p100-vws", None, "P100"),
    ("nvidia-tesla-t4-vws", 16, "T4"),
]


@pytest.mark.parametrize(("raw", "hint", "expected"), REAL_SPELLINGS)
def test_real_payload_spellings_resolve(raw: str, hint: int | None, expected: str) -> None:
    match = resolve_gpu(raw, hint)
    assert match.known, match.reason
    assert match.name == expected


def test_gh200_480gb_is_not_read_as_480_gib_of_gpu_memory() -> None:
    assert normalize_gpu_name("NVIDIA GH200 480GB").memory_gib == 480  # the name does say 480
    # ...but that size names the superchip, so only a hint speaks for the GPU's memory:
    # a 144 GiB hint contradicts the 96 GB part the name means, and nothing is guessed.
    match = resolve_gpu("NVIDIA GH200 480GB", 144)
    assert not match.known and "GH200-96GB" in match.reason
    # Other sizes in a GH200 name are still GPU memory: 144 picks the HBM3e part.
    assert resolve_gpu("NVIDIA GH200 144G HBM3e").name == "GH200-144GB"


def test_vws_is_a_licence_word_not_part_of_the_model() -> None:
    assert normalize_gpu_name("nvidia-tesla-p100-vws").key == "p100"
    assert normalize_gpu_name("nvidia-l4-vws").key == "l4"


# --- issue 10 item 19: GPUs on sale now, dense figures as the cited page prints them ---

# (name, vram_gib, memory_bandwidth_gbs, fp32, bf16, fp8, int8, nvlink), worked by hand:
NEW_ROWS = [
    # nvidia.com/en-us/data-center/hgx: HGX B300 (8 GPUs) FP16/BF16 36 PF*, FP8 72 PF*
    # (* sparse), FP32 600 TF, 2.3 TB total; per GPU 36/8/2 = 2.25 PF, 72/8/2 = 4.5 PF,
    # 600/8 = 75 TF; 288 GB per GPU (AWS p6-b300 reports 275040 MiB = 268.6 GiB).
    ("B300", 288, None, 75, 2250, 4500, None, True),
    # nvidia.com/en-us/data-center/gb200-nvl72: GB200 superchip (1 Grace + 2 GPUs)
    # FP16/BF16 10 PF*, FP8 20 PF*, INT8 20 POPS*, 372 GB HBM3e, 16 TB/s; per GPU
    # 10/2/2 = 2.5 PF, 20/2/2 = 5 PF, 372/2 = 186 GB, 16/2 = 8 TB/s.
    ("GB200", 186, 8000, None, 2500, 5000, 5000, True),
    # nvidia.com/en-us/data-center/gb300-nvl72: 72 GPUs, FP16/BF16 360 PF*, FP8 720 PF*,
    # 576 TB/s; per GPU 360/72/2 = 2.5 PF, 720/72/2 = 5 PF, 576/72 = 8 TB/s; 288 GB HBM3e.
    ("GB300", 288, 8000, None, 2500, 5000, None, True),
    # nvidia.com/en-us/data-center/h200: H200 NVL FP32 60, BF16 1,671*, FP8 3,341*,
    # 141 GB, 4.8 TB/s; 1671/2 = 835.5, 3341/2 = 1670.5.
    ("H200-NVL", 141, 4800, 60, Decimal("835.5"), Decimal("1670.5"), Decimal("1670.5"), True),
    # RTX 6000 Ada datasheet: 48 GB GDDR6, 960 GB/s, FP32 91.1, Tensor 1,457.0 (FP8,
    # sparse) -> 728.5 dense; no BF16/FP16 tensor figure printed.
    ("RTX-6000-Ada", 48, 960, Decimal("91.1"), None, Decimal("728.5"), None, False),
    # nvidia.com/en-us/data-center/rtx-pro-6000-blackwell-server-edition: 96 GB GDDR7,
    # 1,597 GB/s, FP16|BF16 Tensor 1 PFLOP*, FP8 Tensor 2 PFLOPS* (sparse, as the RTX
    # Blackwell whitepaper's dense 503.8 / 1,007.6 for the Workstation Edition show):
    # 1000/2 = 500, 2000/2 = 1000. AWS g7e "RTX PRO Server 6000" reports 98304 MiB = 96 GiB.
    ("RTX-PRO-6000-Blackwell", 96, 1597, None, 500, 1000, None, False),
    # RTX Blackwell architecture whitepaper, RTX 5090: 32 GB GDDR7, 1,792 GB/s, FP32 104.8.
    ("RTX-5090", 32, 1792, Decimal("104.8"), None, None, None, False),
    # A30 datasheet: 24 GB HBM2, 933 GB/s, FP32 10.3, BF16 165 | 330*, INT8 330 | 661*.
    ("A30", 24, 933, Decimal("10.3"), 165, None, 330, True),
    # A16 datasheet, per GPU of the 4-GPU board: 4x 16 GB, 4x 200 GB/s, FP32 4x 4.5,
    # BF16 4x 17.9 | 35.9*, INT8 4x 35.9 | 71.8*.
    ("A16", 16, 200, Decimal("4.5"), Decimal("17.9"), None, Decimal("35.9"), False),
    # AMD MI250X page, per OAM: 128 GB HBM2e, 3.2 TB/s, FP32 vector 47.9, FP16/BF16 383,
    # INT8 383 (AMD prints dense rates; CDNA 2 has no FP8).
    ("MI250X", 128, 3200, Decimal("47.9"), 383, None, 383, False),
    # AMD MI325X page: 256 GB HBM3E, 6 TB/s, FP32 163.4, FP16/BF16 1,307.4, FP8 2,614.9,
    # INT8 2,614.9 (dense; sparse printed separately).
    ("MI325X", 256, 6000, Decimal("163.4"), Decimal("1307.4"), Decimal("2614.9"),
     Decimal("2614.9"), False),
    # AMD MI355X page: 288 GB HBM3E, 8 TB/s, FP32 157.3, FP16/BF16 2.5 PF, FP8 5 PF,
    # INT8 5 POPS (dense; sparse printed separately).
    ("MI355X", 288, 8000, Decimal("157.3"), 2500, 5000, 5000, False),
    # Intel Gaudi 3 white paper, HL-325L OAM: 128 GB HBM2e, 3.7 TB/s, MME BF16 and FP8
    # 1,835 TFLOPS.
    ("Gaudi3", 128, 3700, None, 1835, 1835, None, False),
    # cloud.google.com/tpu/docs/v4: 32 GiB HBM2, 1200 GBps, 275 TFLOPS (bf16 or int8).
    ("TPU-v4", 32, 1200, None, 275, None, 275, False),
    # cloud.google.com/tpu/docs/v6e: 32 GB, 1638 GBps, bf16 918 TFLOPs, int8 1836 TOPs.
    ("TPU-v6e", 32, 1638, None, 918, None, 1836, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "vram", "bandwidth", "fp32", "bf16", "fp8", "int8", "nvlink"), NEW_ROWS
)
def test_gpus_on_sale_now_have_datasheet_rows(
    name: str,
    vram: int,
    bandwidth: int | None,
    fp32: Decimal | int | None,
    bf16: Decimal | int | None,
    fp8: Decimal | int | None,
    int8: Decimal | int | None,
    nvlink: bool,
) -> None:
    spec = get_spec(name)
    assert spec.vram_gib == vram
    assert spec.memory_bandwidth_gbs == bandwidth
    assert spec.fp32_tflops == fp32
    assert spec.bf16_tflops == bf16
    assert spec.fp8_tflops == fp8
    assert spec.int8_tops == int8
    assert spec.nvlink is nvlink
    assert spec.source.startswith("https://")
    if None in (bandwidth, fp32, bf16, fp8, int8):
        assert spec.note, f"{name}: an absent figure needs a note saying why"


@pytest.mark.parametrize(
    ("raw", "hint", "expected"),
    [
        ("B300", Decimal("268.59375"), "B300"),  # AWS p6-b300: 275040 MiB / 1024
        ("RTX PRO Server 6000", 96, "RTX-PRO-6000-Blackwell"),  # AWS g7e: 98304 MiB
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", None, "RTX-PRO-6000-Blackwell"),
        ("RTX PRO 6000", None, "RTX-PRO-6000-Blackwell"),  # OCI part B112613's name
        ("RTX Pro 6000", 96, "RTX-PRO-6000-Blackwell"),
        ("NVIDIA RTX 6000 Ada Generation", None, "RTX-6000-Ada"),
        ("NVIDIA GeForce RTX 5090", None, "RTX-5090"),
        ("NVIDIA GB200", Decimal("185.0"), "GB200"),
        ("nvidia-gb200", None, "GB200"),
        ("NVIDIA H200 NVL", None, "H200-NVL"),
        ("H200", 141, "H200"),  # the bare name stays the SXM part
        ("NVIDIA A30", 24, "A30"),
        ("NVIDIA A16", 16, "A16"),
        ("AMD Instinct MI250X", 128, "MI250X"),
        ("AMD Instinct MI325X", 256, "MI325X"),
        ("AMD Instinct MI355X", 288, "MI355X"),
        ("Intel Gaudi 3", 128, "Gaudi3"),
        ("HL-325L", None, "Gaudi3"),
        ("tpu-v4-podslice", None, "TPU-v4"),
        ("tpu-v6e-slice", None, "TPU-v6e"),
        ("TPU v6e", 32, "TPU-v6e"),
    ],
)
def test_new_rows_are_reached_by_provider_spellings(
    raw: str, hint: Decimal | int | None, expected: str
) -> None:
    match = resolve_gpu(raw, hint)
    assert match.known, match.reason
    assert match.name == expected


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


def test_an_alias_may_carry_a_size_that_is_not_the_gpus_memory(tmp_path: Path) -> None:
    catalog = load_catalog(_write(tmp_path, GOOD_ROW.replace('["X-1"]', '["X-1", "X-1 480GB"]')))
    assert resolve_gpu("NVIDIA X-1 480GB", catalog=catalog).name == "X1"
    assert resolve_gpu("X-1 480 GB", 16, catalog=catalog).name == "X1"  # hint: GPU memory
    assert not resolve_gpu("X-1 480GB", 480, catalog=catalog).known  # 480 is not its VRAM
    assert not resolve_gpu("X-1 240GB", catalog=catalog).known  # only the listed size


def test_a_named_size_cannot_belong_to_two_models(tmp_path: Path) -> None:
    second = GOOD_ROW.replace('"X1"', '"X2"').replace('["X-1"]', '["X-1 480GB"]')
    text = GOOD_ROW.replace('["X-1"]', '["X-1", "X-1 480GB"]') + second
    with pytest.raises(CatalogError, match=r"gpu\[1\] \('X2'\): alias 'X-1 480GB' .*'X1'"):
        load_catalog(_write(tmp_path, text))


def test_loader_reports_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot read"):
        load_catalog(tmp_path / "missing.toml")


def test_packaged_data_file_loads() -> None:
    catalog = load_catalog(DATA_FILE)
    assert len(catalog.specs) == len(all_specs())
