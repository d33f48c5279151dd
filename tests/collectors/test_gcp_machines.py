"""The machine-shape table: documented shapes and the N1 GPU limits."""

from __future__ import annotations

from decimal import Decimal

from collectors.gcp_machines import GPU_TYPES, MACHINE_SHAPES, N1_GPU_LIMITS

SHAPES = {s.machine_type: s for s in MACHINE_SHAPES}


def test_machine_types_are_unique_and_reference_known_gpus() -> None:
    assert len(SHAPES) == len(MACHINE_SHAPES)
    assert all(s.gpu in GPU_TYPES for s in MACHINE_SHAPES)


def test_accelerator_optimized_shapes_match_the_docs() -> None:
    a2u = SHAPES["a2-ultragpu-8g"]
    assert (a2u.vcpus, a2u.memory_gib, a2u.gpu, a2u.gpu_count, a2u.local_ssd_gib) == (
        96,
        Decimal(1360),
        "a100-80gb",
        8,
        3000,
    )
    a3 = SHAPES["a3-highgpu-8g"]
    assert (a3.vcpus, a3.memory_gib, a3.gpu_count, a3.local_ssd_gib) == (208, 1872, 8, 6000)
    assert SHAPES["a3-megagpu-8g"].family == "a3plus"
    assert SHAPES["a3-ultragpu-8g"].gpu == "h200-141gb"
    g2 = SHAPES["g2-standard-4"]
    assert (g2.vcpus, g2.memory_gib, g2.gpu, g2.gpu_count, g2.local_ssd_gib) == (4, 16, "l4", 1, 0)


def test_n1_shapes_respect_the_documented_gpu_limits() -> None:
    n1 = [s for s in MACHINE_SHAPES if s.family == "n1"]
    assert n1
    for shape in n1:
        max_vcpus, max_memory = N1_GPU_LIMITS[shape.gpu][shape.gpu_count]
        assert shape.vcpus <= max_vcpus and shape.memory_gib <= max_memory, shape.machine_type
        assert shape.memory_gib == Decimal("3.75") * shape.vcpus
        assert shape.machine_type == (
            f"{shape.base_machine_type}+{shape.gpu_count}x{shape.gpu_type.accelerator_type}"
        )
    # one V100 allows at most 12 vCPUs: n1-standard-16 cannot take a single V100
    assert "n1-standard-16+1xnvidia-tesla-v100" not in SHAPES
    assert "n1-standard-8+1xnvidia-tesla-v100" in SHAPES
    assert "n1-standard-32+4xnvidia-tesla-t4" in SHAPES
    assert {s.gpu for s in n1} == {"t4", "v100", "p100", "p4"}
