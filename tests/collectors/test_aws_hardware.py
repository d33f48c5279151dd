"""DescribeInstanceTypes -> hardware through the GPU catalog, with AWS's known quirks."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import moto
import pytest

from collectors.aws_hardware import parse_instance_types
from collectors.base import RunContext
from tracker.catalog import get_spec
from tracker.models import Interconnect

from .aws_helpers import instance_type_items, load
from .conftest import run_context


def _hw() -> dict[str, Any]:
    ctx = run_context()
    hw = parse_instance_types(instance_type_items(), ctx.skip)
    assert not ctx.skips
    return hw


def test_p4d_and_p4de_are_40_and_80_gb_a100() -> None:
    hw = _hw()
    assert hw["p4d.24xlarge"].gpu_raw_name == hw["p4de.24xlarge"].gpu_raw_name == "A100"
    assert hw["p4d.24xlarge"].gpu_model == "A100-40GB"
    assert hw["p4de.24xlarge"].gpu_model == "A100-80GB"
    assert hw["p4de.24xlarge"].gpu_memory_gib == 80


def test_p5_is_h100_and_p5e_p5en_are_h200() -> None:
    hw = _hw()
    assert hw["p5.48xlarge"].gpu_model == "H100-SXM"
    assert hw["p5.4xlarge"].gpu_model == "H100-SXM"
    assert hw["p5.4xlarge"].gpu_count == 1
    assert hw["p5e.48xlarge"].gpu_model == "H200"
    assert hw["p5en.48xlarge"].gpu_model == "H200"
    assert hw["p5.48xlarge"].interconnect is Interconnect.NVLINK


def test_generic_gpu_names_resolve_by_memory(ctx: RunContext) -> None:
    # "V100" alone: p3dn reports 32768 MiB per GPU, p3.16xlarge 16384 MiB (2020 capture).
    assert _hw()["p3dn.24xlarge"].gpu_model == "V100-32GB"
    old = load("ec2_describe_instance_types_t3_micro_p3_16xlarge.json")["InstanceTypes"]
    hw = parse_instance_types(old, ctx.skip)
    assert not ctx.skips
    assert set(hw) == {"p3.16xlarge"}  # t3.micro has no GPU: not this tracker's market
    p3 = hw["p3.16xlarge"]
    assert (p3.gpu_raw_name, p3.gpu_model, p3.gpu_count) == ("V100", "V100-16GB", Decimal(8))
    # A10G: AWS reports usable memory (22888 MiB), not the nominal 24 GB.
    g5 = _hw()["g5.xlarge"]
    assert (g5.gpu_model, g5.gpu_memory_gib) == ("A10G", Decimal("22.352"))


def test_fractional_gpus_are_a_share_of_one_gpu() -> None:
    hw = _hw()
    g6f = hw["g6f.large"]  # Count 0, GpuPartitionSize 0.125, 2861 MiB
    assert g6f.gpu_model == "L4"
    assert g6f.gpu_count == Decimal("0.125")
    assert g6f.partition == Decimal("0.125")
    # VRAM is per whole GPU (2861 MiB / 0.125); the slice's share is count x VRAM.
    assert g6f.gpu_memory_gib == Decimal("22.352")
    assert g6f.gpu_count * g6f.gpu_memory_gib == Decimal("2.794")
    assert g6f.attributes()["gpu_partition_size"] == Decimal("0.125")
    assert hw["gr6f.4xlarge"].gpu_count == Decimal("0.5")


def test_neuron_accelerators_are_kept_and_never_named_as_gpus() -> None:
    hw = _hw()
    for name, model in [
        ("inf2.xlarge", "Inferentia2"),
        ("trn1.32xlarge", "Trainium1"),
        ("trn2.48xlarge", "Trainium2"),
    ]:
        assert hw[name].kind == "accelerator"
        assert hw[name].gpu_model == model
        assert get_spec(model).kind == "accelerator"
    assert hw["trn1.32xlarge"].gpu_count == 16
    # trn2 reports 512 GiB per device; the datasheet's 96 GiB is used instead.
    assert hw["trn2.48xlarge"].gpu_memory_gib == get_spec("Trainium2").vram_gib
    # dl2q's Qualcomm AI100 is not in the catalog: kept under AWS's name, flagged.
    dl2q = hw["dl2q.24xlarge"]
    assert (dl2q.gpu_model, dl2q.gpu_known, dl2q.kind) == ("Qualcomm AI100", False, "accelerator")


def test_accelerators_can_be_left_out_by_config(ctx: RunContext) -> None:
    hw = parse_instance_types(instance_type_items(), ctx.skip, include_accelerators=False)
    assert "inf2.xlarge" not in hw and "trn1.32xlarge" not in hw
    assert "p5.48xlarge" in hw


def test_video_transcoders_and_plain_instances_are_not_accelerators() -> None:
    hw = _hw()
    assert "vt1.3xlarge" not in hw  # MediaAcceleratorInfo (Xilinx U30)
    assert "m5.large" not in hw


def test_a_gpu_item_without_a_name_is_a_counted_skip(ctx: RunContext) -> None:
    items = instance_type_items()
    broken = json.loads(json.dumps(next(i for i in items if i["InstanceType"] == "g5.xlarge")))
    broken["GpuInfo"]["Gpus"][0].pop("Name")
    hw = parse_instance_types([broken], ctx.skip)
    assert hw == {}
    assert ctx.skips == Counter({"malformed_instance_type": 1})


def _moto_instance_types() -> dict[str, Any]:
    path = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


@pytest.mark.parametrize("include", [True, False])
def test_every_real_instance_type_moto_ships_resolves_sanely(
    include: bool, ctx: RunContext
) -> None:
    """All of moto's DescribeInstanceTypes data (dumped from AWS): every NVIDIA/AMD GPU
    resolves to a known catalog GPU, and nothing from GpuInfo is named an accelerator."""
    data = _moto_instance_types()
    hw = parse_instance_types(data.values(), ctx.skip, include_accelerators=include)
    assert not ctx.skips
    gpus = {n: h for n, h in hw.items() if h.kind == "gpu"}
    assert len(gpus) >= 50
    must_know = {"A100", "A10G", "B200", "H100", "H200", "L4", "L40S", "T4", "T4g", "V100"}
    assert must_know <= {h.gpu_raw_name for h in gpus.values() if h.gpu_known}
    for name, h in gpus.items():
        assert h.gpu_count > 0, name
        if h.gpu_known:
            assert get_spec(h.gpu_model).kind == "gpu", name
        else:  # newer than the catalog (e.g. B300): kept under AWS's spelling, flagged
            assert h.gpu_model == h.gpu_raw_name, name
    accelerators = {n for n, h in hw.items() if h.kind == "accelerator"}
    assert bool(accelerators) is include
