"""Llama 2 70B serving against MLPerf Inference v4.1: MI300X at 0.96x an H100 (issue 16).

The datasheet put an MI300X at 1.3-1.6x an H100 (2,614.9 vs 1,979 fp8 TFLOPS, 5.3 vs
3.35 TB/s), and the model followed it (1.4-1.65x). MLPerf measured the two 8-GPU systems
on the same benchmark. Expected figures are the published Tokens/s, quoted below.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.recommend.test_calibration import offer
from tracker.recommend import Ranking, load_profiles, make_profile, rank
from tracker.recommend.calibration import Basis
from tracker.recommend.measured import shipped_measurements

# mlcommons/inference_results_v4.1 summary READMEs (commit 2e26a06), llama2-70b-99, Offline
# Tokens/s over the 8-GPU system: DGX H100 24,524.9; H200 x8 31,302.7; 8x MI300X 23,514.8
H100, H200, MI300X = 24524.9, 31302.7, 23514.8


def _llama2_70b(**over: Any) -> dict[str, Any]:
    """MLPerf's job: Llama 2 70B (8 KV heads) in fp8, offline, requests of 294/294 tokens
    (the shape the shipped rows record), 1e9 answer tokens on exactly 8 GPUs."""
    fields: dict[str, Any] = dict(
        params=70e9,
        task="inference",
        precision="fp8",
        input_tokens=294,
        output_tokens=294,
        concurrency="max",
        tokens=1e9,
        kv_heads=8,
        min_gpus=8,
        max_gpus=8,
    )
    return {**fields, **over}


def _tokens_per_second(ranking: Ranking) -> dict[str, float]:
    out = {}
    for c in ranking.candidates:
        assert c.job_hours is not None
        out[c.offer.gpu_model] = 1e9 / (c.job_hours * 3600)
    return out


def test_the_shipped_mlperf_rows_are_the_published_figures() -> None:
    rows = {m.id: m for m in shipped_measurements() if m.id.startswith("mlperf-v4.1-llama2-70b")}
    assert {m.gpu: m.throughput for m in rows.values()} == {
        "H100-SXM": H100,
        "H200": H200,
        "MI300X": MI300X,
    }
    for m in rows.values():
        assert m.gpu_count == 8 and m.precision.value == "fp8" and m.kv_heads == 8
        assert m.source.startswith("https://github.com/mlcommons/inference_results_v4.1/blob/")


def test_an_mi300x_serves_llama2_70b_at_its_measured_096_of_an_h100() -> None:
    # Each 8-GPU offer reproduces its system's published figure (an offer is worked out as
    # the measurement is: best split into replicas), so on MLPerf's own job the MI300X
    # delivers 23,514.8 / 24,524.9 = 0.9588 of an H100, not the datasheet's 1.3-1.6x.
    # Equal prices per GPU-hour: the H100 box finishes sooner, so it ranks first.
    ranking = rank(
        make_profile("mlperf", _llama2_70b()), [offer("MI300X", 8), offer("H100-SXM", 8)]
    )
    assert [c.offer.gpu_model for c in ranking.candidates] == ["H100-SXM", "MI300X"]
    assert {c.rate.basis for c in ranking.candidates} == {Basis.MEASURED}
    tps = _tokens_per_second(ranking)
    assert tps["H100-SXM"] == pytest.approx(H100, rel=1e-6)
    assert tps["MI300X"] == pytest.approx(MI300X, rel=1e-6)
    assert tps["MI300X"] / tps["H100-SXM"] == pytest.approx(0.9588, abs=5e-4)


@pytest.mark.parametrize(("inp", "out"), [(1000, 1000), (128, 2048), (2048, 128)])
def test_other_request_shapes_keep_the_mi300x_near_its_measured_ratio(inp: int, out: int) -> None:
    # Away from the measured shape the serving model takes over, calibrated per GPU. Long
    # answers hold more KV cache, where the MI300X's 192 GB (against 80) fits a bigger
    # batch, so the ratio may move a little above the measured 0.9588, but nowhere near
    # the datasheet's 1.32x (2,614.9 / 1,979 fp8 TFLOPS) or 1.58x (5.3 / 3.35 TB/s).
    p = make_profile("serve", _llama2_70b(input_tokens=inp, output_tokens=out))
    tps = _tokens_per_second(rank(p, [offer("MI300X", 8), offer("H100-SXM", 8)]))
    assert 0.85 < tps["MI300X"] / tps["H100-SXM"] < 1.15


def test_an_h200_box_serves_llama2_70b_at_its_measured_ratio_to_an_h100() -> None:
    # 31,302.7 / 24,524.9 = 1.2764: the H200's extra memory and bandwidth, as measured
    ranking = rank(make_profile("mlperf", _llama2_70b()), [offer("H100-SXM", 8), offer("H200", 8)])
    tps = _tokens_per_second(ranking)
    assert tps["H200"] / tps["H100-SXM"] == pytest.approx(1.2764, abs=5e-4)


def test_a_16_bit_job_scales_from_the_gpus_own_fp8_measurement_not_another_vendors() -> None:
    # The built-in 70B serving profile is fp16. No 16-bit serving figure exists for the
    # MI300X, so it used to be scaled from an NVIDIA GPU by datasheet (its peaks taken at
    # face value). Now its own MLPerf measured/modelled ratio carries over, flagged as
    # scaled, and the offline MI300X/H100 ratio stays near the measured 0.9588.
    p = make_profile("serve16", _llama2_70b(precision="fp16"))
    ranking = rank(p, [offer("MI300X", 8), offer("H100-SXM", 8)])
    for c in ranking.candidates:
        assert c.rate.basis is Basis.SCALED
        assert c.rate.source.startswith("from its own measurement at another precision: mlperf-")
    tps = _tokens_per_second(ranking)
    assert tps["MI300X"] / tps["H100-SXM"] == pytest.approx(0.9588, rel=0.10)


def test_the_built_in_70b_serving_profile_no_longer_takes_mi300x_peaks_at_face_value() -> None:
    # llm-70b-inference: fp16, 1,000/1,000 tokens, 8 requests at once. At a concurrency of
    # 8 decode is bound by memory, where the MI300X's 5.3 TB/s against 3.35 counts; still
    # its calibrated advantage stays below the datasheet bandwidth ratio 1.58.
    p = load_profiles().get("llm-70b-inference")
    ranking = rank(p, [offer("MI300X", 8), offer("H100-SXM", 8)])
    hours = {c.offer.gpu_model: c.job_hours for c in ranking.candidates}
    h100, mi300x = hours["H100-SXM"], hours["MI300X"]
    assert h100 is not None and mi300x is not None
    assert 0.85 < h100 / mi300x < 5.3 / 3.35


def test_the_built_in_70b_profile_keeps_mlperfs_order_h200_then_h100_and_mi300x_alike() -> None:
    # Issue 28: MLPerf Inference v4.1 Llama 2 70B offline per GPU: H200 31,302.7 / 8 =
    # 3,912.8 > H100 24,524.9 / 8 = 3,065.6 ~ MI300X 23,514.8 / 8 = 2,939.4 tokens/s. On
    # the built-in profile (fp16, 1,000/1,000 tokens, 8 in flight) the H200 finishes
    # first and the MI300X and H100 stay within the ±25 % an estimate carries of each
    # other (the datasheets alone put the MI300X 1.3-1.6x ahead).
    p = load_profiles().get("llm-70b-inference")
    ranking = rank(p, [offer(g, 8) for g in ("MI300X", "H100-SXM", "H200")])
    hours = {c.offer.gpu_model: c.job_hours for c in ranking.candidates}
    assert ranking.candidates[0].offer.gpu_model == "H200"
    h100, mi300x = hours["H100-SXM"], hours["MI300X"]
    assert h100 is not None and mi300x is not None
    assert 0.8 <= h100 / mi300x <= 1.25
