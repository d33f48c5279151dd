"""B200 LLM training from a published measurement, not the datasheet (issue 16).

NVIDIA's Megatron-Bridge performance summary (NeMo container 25.11) measures Llama 3 8B
pre-training in FP8 on one 8-GPU DGX-H100 and DGX-B200. Expected figures are its rows.
"""

from __future__ import annotations

import pytest

from tests.recommend.test_calibration import gpu_order, offer
from tracker.recommend import make_profile, rank
from tracker.recommend.calibration import Basis

# docs/performance-summary.md (commit 00b7660), LLAMA3_8B, 8 GPUs, FP8-CS, Tokens/sec/GPU
H100_PER_GPU, B200_PER_GPU = 14451, 30624


def _pretrain_8b() -> dict[str, object]:
    return dict(
        params=8.03e9,
        task="pretrain",
        precision="fp8",
        tokens=1e11,
        sequence_length=8192,
        min_gpus=8,
        max_gpus=8,
        interconnect="required",
    )


def test_a_b200_box_trains_at_its_measured_212x_an_h100_box() -> None:
    # Same model on both, so FLOPs per token cancel: hours ratio = 30,624 / 14,451 = 2.1192.
    # Equally priced per GPU-hour, the B200 box ranks first.
    ranking = rank(make_profile("pt", _pretrain_8b()), [offer("H100-SXM", 8), offer("B200", 8)])
    assert gpu_order(ranking) == ["B200", "H100-SXM"]
    b200, h100 = ranking.candidates
    assert {b200.rate.basis, h100.rate.basis} == {Basis.MEASURED}
    assert b200.rate.source.startswith("megatron-bridge-25.11-llama3-8b-b200-8gpu-fp8 (https://")
    assert b200.job_hours is not None and h100.job_hours is not None
    assert h100.job_hours / b200.job_hours == pytest.approx(2.1192, abs=1e-4)


def test_8b_fp8_pretraining_hours_on_8_h100s_by_hand() -> None:
    # 1e11 tokens / (8 GPUs x 14,451 tokens/s) = 865,001 s = 240.28 h (8.03e9 parameters:
    # the measured model itself, no FLOPs scaling)
    ranking = rank(make_profile("pt", _pretrain_8b()), [offer("H100-SXM", 8)])
    (c,) = ranking.candidates
    assert c.job_hours == pytest.approx(1e11 / (8 * H100_PER_GPU) / 3600, rel=1e-9)
    assert c.job_hours == pytest.approx(240.28, abs=0.01)
