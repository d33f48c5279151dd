"""The A10G ranks for training by a stated rule, and RTX PRO 6000 from its datasheet (issue 28).

The A10G rule: NVIDIA publishes no figures for this AWS-only part and AWS's g5 page
(https://aws.amazon.com/ec2/instance-types/g5/) publishes its 24 GB per GPU but no
TFLOPS, so it is rated as the A10 (the same GA102 die at the A10's published clocks and
600 GB/s), basis ``modelled``. Expected hours are the A10's published measurement:
lambdal/deeplearning-benchmark pytorch-train-throughput-fp16.csv at 0551cb7, row
'LambdaCloud A10', resnet50 = 638 images/s (PyTorch NGC, AMP, 1 GPU; undated file).
"""

from __future__ import annotations

import pytest

from tests.recommend.test_calibration import RESNET50, offer
from tracker.recommend import load_profiles, make_profile, rank
from tracker.recommend.calibration import Basis
from tracker.recommend.measured import parse_measurement, shipped_measurements


def test_a_g5_offer_ranks_for_resnet50_training_as_the_a10_and_says_so() -> None:
    # 1,281,167 images x 90 epochs / 638 images/s = 180,728.9 s = 50.2025 h, as on an A10
    ranking = rank(make_profile("r50", RESNET50), [offer("A10G", 1), offer("A10", 1)], explain=True)
    by_gpu = {c.offer.gpu_model: c for c in ranking.candidates}
    a10g, a10 = by_gpu["A10G"], by_gpu["A10"]
    assert a10g.job_hours == pytest.approx(50.2025, abs=1e-3)
    assert a10g.job_hours == pytest.approx(a10.job_hours)
    assert a10g.rate.basis is Basis.MODELLED and a10.rate.basis is Basis.MEASURED
    assert "lambda-resnet50-a10" in a10g.rate.source
    (note,) = [n for n in ranking.notes if n.startswith("A10G:")]
    assert note.startswith("A10G: basis modelled, A10G modelled as the A10 (the same GA102 die")
    assert "AWS's g5 page publishes 24 GB per GPU" in note


@pytest.mark.parametrize(
    "profile",
    ["cv-small-training", "bert-base-finetune", "llm-7b-lora", "llm-7b-full-finetune"],
)
def test_a10g_offers_rank_for_every_built_in_training_profile_that_fits(profile: str) -> None:
    # 1x, 4x (g5.12xlarge) and 8x (g5.48xlarge) A10G: each profile ranks at least one of
    # them (the full 7B fine-tune needs 8 x 24 GB), none is left out for lack of a rate.
    p = load_profiles().get(profile)
    ranking = rank(p, [offer("A10G", n) for n in (1, 4, 8)], explain=True)
    assert ranking.candidates, [e.detail for e in ranking.exclusions]
    assert all(c.rate.basis is Basis.MODELLED for c in ranking.candidates)
    assert "no_throughput" not in ranking.excluded_counts


def test_your_a10g_training_measurement_overrides_the_rule() -> None:
    # Yours: 700 images/s of ResNet-50 on one A10G. 115,305,030 images / 700 = 164,721.5 s
    # = 45.756 h, measured (yours), not the A10's 50.2 h.
    mine = parse_measurement(
        {
            "id": "mine",
            "class": "cnn_training",
            "model": "my ResNet-50",
            "params": 25.6e6,
            "flops_per_image": 7.736e9,
            "gpu": "A10G",
            "gpu_count": 1,
            "precision": "fp16",
            "throughput": 700,
            "unit": "images/s",
        },
        "profiles.toml",
        yours=True,
    )
    table = (*shipped_measurements(), mine)
    (c,) = rank(make_profile("r50", RESNET50), [offer("A10G", 1)], measurements=table).candidates
    assert c.rate.label == "measured (yours)"
    assert c.job_hours == pytest.approx(45.756, abs=1e-3)


def test_rtx_pro_6000_ranks_from_its_datasheet_under_its_cloud_spellings() -> None:
    # OCI prices it as "RTX PRO 6000", AWS g7e reports "RTX PRO Server 6000": both resolve
    # to the Server Edition row (96 GB, 1,597 GB/s, FP16 500 dense) and rank, scaled from
    # the nearest measured GPU by the roofline.
    from tracker.catalog import resolve_gpu

    for raw in (
        "RTX PRO 6000",
        "RTX PRO Server 6000",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    ):
        assert resolve_gpu(raw).name == "RTX-PRO-6000-Blackwell"
    ranking = rank(make_profile("r50", RESNET50), [offer("RTX-PRO-6000-Blackwell", 1)])
    (c,) = ranking.candidates
    assert c.rate.basis is Basis.SCALED


def test_pascal_gpus_rank_at_their_datasheets_cuda_core_rates() -> None:
    # P100 PCIe datasheet: 18.7 TFLOPS half precision on CUDA cores (no tensor cores).
    # bert-base-finetune on one P100: FLOPs = 6 x 110e6 x 150.8e6 = 9.9528e16; at
    # 18.7e12 x the full_finetune MFU.
    from tracker.recommend.assumptions import Assumptions

    eff = Assumptions().efficiency_for("full_finetune")
    p = load_profiles().get("bert-base-finetune")
    (c,) = rank(p, [offer("P100", 1)], explain=True).candidates
    assert c.rate.basis is Basis.MODELLED and c.rate.flops == pytest.approx(18.7e12 * eff)
    assert c.rate.source.startswith("P100 has no tensor cores")
    # P4 datasheet: 5.5 TFLOPS single precision, no FP16 rate: costed in fp32, and says so
    (p4,) = rank(p, [offer("P4", 1)]).candidates
    assert p4.rate.flops == pytest.approx(5.5e12 * eff)
    assert p4.rate.fallback == "fp16 runs as fp32: P4 has no fp16 rate"


def test_a_g5g_t4g_trains_as_the_t4() -> None:
    ranking = rank(make_profile("r50", RESNET50), [offer("T4G", 1), offer("T4", 1)])
    t4g, t4 = sorted(ranking.candidates, key=lambda c: c.offer.gpu_model != "T4G")
    assert t4g.job_hours == pytest.approx(t4.job_hours)
    assert t4g.rate.basis is Basis.MODELLED and t4g.rate.source.startswith("T4G modelled as the T4")


def test_the_rtx_6000_ada_ranks_for_bf16_work_by_its_16_bit_rule() -> None:
    # Datasheet: FP8 1,457.0 with sparsity -> 728.5 dense (catalog), no 16-bit figure. Ada
    # whitepaper, RTX 4090 FP32-accumulate columns: FP16 165.2, FP8 330.3. 16-bit taken as
    # 728.5 x 165.2 / 330.3 = 364.36 -> 364.4 TFLOPS.
    p = load_profiles().get("llm-7b-lora")
    ranking = rank(p, [offer("RTX-6000-Ada", 1)], explain=True)
    (c,) = ranking.candidates
    assert c.rate.basis is Basis.MODELLED
    assert c.rate.source.startswith("RTX-6000-Ada 16-bit taken as 364.4 TFLOPS")
    # its own ResNet-50 row (Lambda: 1146 images/s) still wins for ResNet-50
    (r50,) = rank(make_profile("r50", RESNET50), [offer("RTX-6000-Ada", 1)]).candidates
    assert r50.rate.basis is Basis.MEASURED
