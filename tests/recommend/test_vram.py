"""VRAM arithmetic, checked against numbers worked out by hand in the comments."""

from __future__ import annotations

from typing import Any

import pytest

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.profiles import Profile, make_profile
from tracker.recommend.vram import GIB, VramEstimate, estimate_vram, model_shape

A = Assumptions()
GB24 = 24e9 / GIB  # a "24 GB" card: 22.35 GiB
GB40 = 40e9 / GIB
GB80 = 80e9 / GIB


def profile(**fields: Any) -> Profile:
    fields.setdefault("tokens", 1e6)
    return make_profile("t", fields)


def test_full_finetune_7b_bf16_adam_does_not_fit_one_40_or_80_gb_gpu() -> None:
    v = estimate_vram(profile(params=7e9, task="full_finetune", precision="bf16"), A)
    # ZeRO §3.1: 2 + 2 + 12 bytes per parameter
    assert v.weights == pytest.approx(14e9)  # 7e9 x 2 (bf16)
    assert v.gradients == pytest.approx(14e9)  # 7e9 x 2
    assert v.optimizer == pytest.approx(84e9)  # 7e9 x 12 (fp32 master, m, v)
    states_gib = 112e9 / GIB  # 104.31 GiB before a single activation
    assert v.total / GIB > states_gib > GB80 > GB40


def test_full_finetune_7b_fits_eight_80_gb_gpus_only_when_sharded() -> None:
    v = estimate_vram(profile(params=7e9, task="full_finetune", precision="bf16"), A)
    # ZeRO-3 over 8: 112e9 / 8 = 14e9 B (13.04 GiB) + this GPU's activations
    assert v.per_gpu(8, sharded=True) == pytest.approx(14e9 + v.activations)
    assert v.per_gpu(8, sharded=True) / GIB < GB80
    # plain data parallelism keeps a full replica per GPU: still 104+ GiB each
    assert v.per_gpu(8, sharded=False) == v.total


def test_fp32_training_counts_four_bytes_for_weights_and_gradients() -> None:
    v = estimate_vram(profile(params=1e9, task="pretrain", precision="fp32"), A)
    assert (v.weights, v.gradients, v.optimizer) == pytest.approx((4e9, 4e9, 8e9))


def test_inference_7b_fp16_fits_a_24_gb_gpu() -> None:
    v = estimate_vram(profile(params=7e9, task="inference", precision="fp16"), A)
    # weights 7e9 x 2 = 14e9 B; runtime overhead 20 % of that = 2.8e9 B
    assert v.weights == pytest.approx(14e9)
    assert v.overhead == pytest.approx(2.8e9)
    # shape from N = 12·L·d², L = d/128: d = (7e9·128/12)^(1/3) = 4210.9, L·d = 138,529
    # KV cache = 2 (K and V) x L·d x 2 bytes x 2048 tokens x batch 1 = 1.1348e9 B
    assert v.kv_cache == pytest.approx(1.1348e9, rel=1e-3)
    assert v.total == pytest.approx(17.935e9, rel=1e-3)  # 16.70 GiB
    assert v.total / GIB < GB24


def test_inference_70b_fp16_does_not_fit_one_80_gb_gpu_but_fits_four_with_tensor_parallel() -> None:
    v = estimate_vram(profile(params=70e9, task="inference", precision="fp16"), A)
    assert v.weights == pytest.approx(140e9)
    assert v.total / GIB > GB80
    assert v.per_gpu(4, sharded=True) / GIB < GB80


def test_qlora_70b_fits_one_80_gb_gpu() -> None:
    v = estimate_vram(profile(params=70e9, task="qlora", precision="int4"), A)
    # NF4 + double quantisation: 4.127 bits = 0.5159 bytes per parameter -> 36.11e9 B
    assert v.weights == pytest.approx(70e9 * 4.127 / 8)
    # d = (70e9·128/12)^(1/3) = 9072.1, L·d = 642,995; adapters r=64 on every linear layer:
    # 19·r·d per layer -> 642,995 x 64 x 19 = 781.9e6 params x 16 B = 12.51e9 B
    assert v.adapters == pytest.approx(12.51e9, rel=1e-3)
    # activations with full recomputation (Korthikanti et al.): 4.75e9 B at s=2048, b=1
    assert v.activations == pytest.approx(4.752e9, rel=1e-3)
    assert v.total / GIB == pytest.approx(49.71, abs=0.01)
    assert v.total / GIB < GB80
    assert v.total / GIB > GB40  # but not a 40 GB card


def test_lora_7b_bf16_fits_24_gb_and_has_no_full_optimizer_state() -> None:
    v = estimate_vram(profile(params=7e9, task="lora", precision="bf16"), A)
    assert v.gradients == 0 and v.optimizer == 0
    assert v.weights == pytest.approx(14e9)
    assert v.total / GIB < GB24


def test_cnn_activations_scale_with_batch_and_halve_in_fp16() -> None:
    base = dict(params=25.6e6, task="cnn_training", images=1e6, epochs=1, tokens=None)
    fp32 = estimate_vram(
        profile(**base, precision="fp32", batch_size=64, activation_bytes_per_image=279.3e6), A
    )
    fp16 = estimate_vram(
        profile(**base, precision="fp16", batch_size=128, activation_bytes_per_image=279.3e6), A
    )
    assert fp32.activations == pytest.approx(64 * 279.3e6)
    assert fp16.activations == pytest.approx(128 * 279.3e6 / 2)
    assert fp16.weights + fp16.gradients + fp16.optimizer == pytest.approx(25.6e6 * 16)


def test_longer_sequences_and_bigger_batches_need_more_kv_cache() -> None:
    short = estimate_vram(profile(params=7e9, task="inference", precision="fp16"), A)
    long = estimate_vram(
        profile(params=7e9, task="inference", precision="fp16", sequence_length=8192, batch_size=4),
        A,
    )
    assert long.kv_cache == pytest.approx(short.kv_cache * 4 * 4)


def test_model_shape_matches_llama_7b_roughly() -> None:
    shape = model_shape(6.7e9, A)  # LLaMA-7B: d_model 4096, 32 layers
    assert shape.d_model == pytest.approx(4096, rel=0.03)
    assert shape.layers == pytest.approx(32, rel=0.03)


# --- issue 28: CNN activations from a measured per-architecture figure ---------------
# mmclassification configs/fp16/README.md (open-mmlab/mmpretrain at 6bdb954), ResNet-50
# fp16, 32 images of 224x224 per GPU: Mem (GB) 1.9 (harness: mmcv fp16 training, PyTorch
# max_memory_allocated; model dated 2021-03-20). Less 25.56e6 x 16 B of model state:
# (1.9 x 2^30 - 408.96e6) / 32 = 50.973e6 B per image in fp16.
RESNET50_HALF_BYTES = (1.9 * 2**30 - 25.56e6 * 16) / 32


def _resnet50(batch: int, precision: str = "fp16") -> VramEstimate:
    p = profile(
        params=25.6e6,
        task="cnn_training",
        precision=precision,
        images=1e6,
        epochs=1,
        tokens=None,
        batch_size=batch,
        cnn_architecture="resnet50",
    )
    return estimate_vram(p, A)


def test_resnet50_reproduces_the_measured_peak_at_its_measured_batch() -> None:
    from tracker.recommend.cnn_memory import ARCHITECTURES

    assert ARCHITECTURES["resnet50"].half_bytes_per_image(A) == pytest.approx(50_973_420.8)
    v = _resnet50(32)
    assert v.activations == pytest.approx(32 * RESNET50_HALF_BYTES)
    # 25.6e6 (the profile's size) x 16 B + 32 x 50.973e6 = 2.0407e9 B = 1.9005 GiB
    assert v.total / GIB == pytest.approx(1.9, abs=0.002)


def test_resnet50_batch_256_fp16_fits_16_gb_and_batch_512_does_not() -> None:
    # NVIDIA DeepLearningExamples RN50v1.5 (PyTorch, examples/RN50_FP16_8GPU.sh): "FP16 on
    # 8 GPUs using 2048 batch size (256 per GPU)", results on DGX-1 8x V100 16G (pytorch-19.10
    # NGC). 409.6e6 + 256 x 50.973e6 = 13.459e9 B = 12.53 GiB <= 16; at 512:
    # 409.6e6 + 26.098e9 = 26.508e9 B = 24.69 GiB > 16.
    assert _resnet50(256).total / GIB == pytest.approx(12.53, abs=0.01)
    assert _resnet50(256).total / GIB <= 16
    assert _resnet50(512).total / GIB == pytest.approx(24.69, abs=0.01)
    assert _resnet50(512).total / GIB > 16


@pytest.mark.parametrize(
    ("gib", "batch"),
    # lambdal/deeplearning-benchmark pytorch/pytorch-train-bs-fp16.csv at a25f47c, column
    # resnet50 (AMP, DeepLearningExamples recipe, 1 GPU, undated file): the batch each GPU
    # ran. Every one fits its GPU in the estimate.
    [(16, 256), (24, 448), (40, 720), (48, 928), (80, 1280)],
)
def test_every_batch_lambda_ran_fits_its_gpu_in_the_estimate(gib: int, batch: int) -> None:
    assert _resnet50(batch).total / GIB <= gib


def test_fp32_keeps_twice_the_activation_bytes() -> None:
    assert _resnet50(64, "fp32").activations == pytest.approx(2 * _resnet50(64).activations)


def test_an_unknown_cnn_architecture_is_a_one_line_error() -> None:
    from tracker.recommend import ProfileError, make_profile

    with pytest.raises(ProfileError, match="cnn_architecture: 'vgg99' is not one of resnet50"):
        make_profile(
            "x",
            dict(params=1e7, task="cnn_training", precision="fp16", cnn_architecture="vgg99"),
        )


def test_the_built_in_resnet50_profile_ranks_16_gb_gpus() -> None:
    # cv-small-training (batch 128, fp16): 409.6e6 + 128 x 50.973e6 = 6.934e9 B = 6.46 GiB,
    # well inside a T4's or V100's 16 GiB (the old 279.3 MB fp32 figure needed 17.4 GiB).
    from tests.recommend.test_calibration import offer
    from tracker.recommend import load_profiles, rank

    ranking = rank(
        load_profiles().get("cv-small-training"), [offer("T4", 1), offer("V100-16GB", 1)]
    )
    assert {c.offer.gpu_model for c in ranking.candidates} == {"T4", "V100-16GB"}
    assert ranking.candidates[0].vram_needed_per_gpu_gib == pytest.approx(6.46, abs=0.01)
