"""Serving by vendor, phase and precision, against figures the fit does not see (issue 38.4).

Two held-out sets: MLPerf Inference v5.0's Llama 2 70B offline figures for the two NVIDIA
8-GPU systems whose v4.1 figures are shipped (tests/fixtures/held_out/mlperf_serving.toml),
and each NVIDIA serving GPU's shipped rows predicted with that GPU's rows left out (what a
newer GPU without a serving measurement, a B200, is rated by). Printed figures are the
ones docs/recommendations.md quotes.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.recommend.test_calibration import offer
from tests.recommend.test_held_out import serving_job
from tracker.recommend import rank
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.calibration import Basis
from tracker.recommend.measured import Measurement, load_measurements, shipped_measurements
from tracker.recommend.serving_fit import fit_vendor_efficiencies, modelled_serving

A = Assumptions()
HELD_OUT = Path(__file__).parents[1] / "fixtures" / "held_out" / "mlperf_serving.toml"
SERVING_GPUS = ("H100-SXM", "H200", "L40S", "A100-80GB")


def held_out() -> list[Measurement]:
    with HELD_OUT.open("rb") as fh:
        return load_measurements(tomllib.load(fh)["measurement"], str(HELD_OUT))


def _per_gpu(m: Measurement, rows: tuple[Measurement, ...]) -> tuple[float, Any]:
    """Predicted output tokens/s per GPU for ``m``'s job from ``rows``, and the candidate."""
    job = serving_job(m)
    (c,) = rank(job, [offer(m.gpu, int(m.gpu_count))], measurements=rows).candidates
    assert c.job_hours is not None
    return 1e9 / (c.job_hours * 3600) / m.gpu_count, c


def test_no_held_out_mlperf_row_is_shipped() -> None:
    shipped = {(m.gpu, m.throughput) for m in shipped_measurements()}
    rows = held_out()
    assert len(rows) == 4
    assert not any((m.gpu, m.throughput) in shipped for m in rows)


def test_held_out_mlperf_llama2_70b_offline_within_25_percent_and_in_the_measured_order() -> None:
    # Published per GPU: v5.0 H200 34,988.2 / 8 = 4,373.5 > v5.0 H100 31,306.8 / 8 = 3,913.4;
    # v4.1 MI300X on 8 GPUs (Turin host) 24,109.8 / 8 = 3,013.7, on one GPU 3,062.72.
    rows = held_out()
    predicted = {m.id: _per_gpu(m, shipped_measurements())[0] for m in rows}
    for m in rows:
        e = predicted[m.id] / (m.throughput / m.gpu_count) - 1
        print(f"{m.id}: predicted {predicted[m.id]:,.0f} per GPU, {e:+.0%}")
        assert abs(e) <= 0.25
    eight = {m.gpu: predicted[m.id] for m in rows if m.gpu_count == 8 and "v5.0" in m.id}
    assert eight["H200"] > eight["H100-SXM"]


def _leave_one_gpu_out() -> dict[str, float]:
    shipped = shipped_measurements()
    errors = {}
    for g in SERVING_GPUS:
        rest = tuple(m for m in shipped if m.gpu != g)
        for m in shipped:
            if m.gpu == g and m.workload_class.value == "llm_inference":
                errors[m.id] = _per_gpu(m, rest)[0] * m.gpu_count / m.throughput - 1
    return errors


def test_nvidia_serving_rows_with_their_gpu_held_out() -> None:
    errors = _leave_one_gpu_out()
    for row, e in errors.items():
        print(f"{row}: {e:+.0%}")
    within = sum(abs(e) <= 0.25 for e in errors.values())
    median = sorted(abs(e) for e in errors.values())[len(errors) // 2]
    print(f"GPU held out: {within}/{len(errors)} within ±25 %, median {median:.0%}")
    assert len(errors) == 21 and all(math.isfinite(e) for e in errors.values())
    # Before the vendor fit (the nearest GPU's single measured/modelled ratio): 16 of 21,
    # median 14 %. Held where it now stands (17 of 21, median 12 %) so it cannot slip back.
    assert within >= 17 and median <= 0.13


@pytest.mark.xfail(strict=True, reason="the serving model's batch sizing, not the fit: open")
def test_mlperf_order_h200_over_h100_with_each_gpus_rows_held_out() -> None:
    # MLPerf v4.1 per GPU: H200 31,302.7 / 8 = 3,912.8 > H100 24,524.9 / 8 = 3,065.6. With
    # its own rows held out each is rated by NVIDIA's fitted fp8 efficiency: the H100
    # comes out 7 % fast and the H200 20 % slow, so the order flips (3,276 > 3,116).
    shipped = shipped_measurements()
    mlperf = {m.gpu: m for m in shipped if m.id.startswith("mlperf-v4.1-llama2-70b")}
    predicted = {
        g: _per_gpu(mlperf[g], tuple(m for m in shipped if m.gpu != g))[0]
        for g in ("H100-SXM", "H200")
    }
    assert predicted["H200"] > predicted["H100-SXM"]


def test_a_gpu_without_serving_rows_takes_its_vendors_fitted_efficiency_per_phase() -> None:
    # No B200 serving row is shipped: its fp8 serving rate is its datasheet x NVIDIA's fp8
    # efficiency fitted on the H100, H200 and L40S rows, separately on compute (prefill) and
    # bandwidth (decode); it used to be the nearest GPU's (the H200's) single ratio.
    mlperf = next(m for m in shipped_measurements() if m.id.startswith("mlperf-v4.1-llama2-70b-h1"))
    job = Measurement(**{**_fields(mlperf), "gpu": "B200"})
    _, c = _per_gpu(job, shipped_measurements())
    assert c.rate.basis is Basis.SCALED
    assert c.rate.source.startswith("NVIDIA fp8 serving efficiency fitted on 18 rows (")
    fit = fit_vendor_efficiencies(shipped_measurements(), A)[("NVIDIA", "fp8")]
    assert fit.compute != fit.bandwidth
    assert c.rate.memory_scale == fit.bandwidth


def _fields(m: Measurement) -> dict[str, Any]:
    return {f: getattr(m, f) for f in m.__dataclass_fields__}


def test_one_request_shape_fits_one_factor_the_measured_over_modelled_ratio() -> None:
    # AMD's only serving row is MLPerf's 8x MI300X at one request shape: prefill and decode
    # cannot be told apart, so one factor scales both. Scaling compute and bandwidth by k
    # scales the modelled tokens/s by exactly k (the batch is set by memory, unchanged),
    # so the least-squares k is measured / modelled, to within the grid's step 2^(1/8).
    (row,) = [m for m in shipped_measurements() if m.gpu == "MI300X"]
    fit = fit_vendor_efficiencies(shipped_measurements(), A)[("AMD", "fp8")]
    assert fit.compute == fit.bandwidth and fit.rows == (row.id,)
    one = np.ones(1)
    ratio = row.throughput / float(modelled_serving(row, A, one, one)[0])
    assert abs(math.log(fit.compute / ratio)) <= math.log(2) / 16


def test_held_out_mlperf_relative_speeds_within_08_to_125_of_measured() -> None:
    # Same round, same benchmark, per GPU. v5.0: H200 4,373.5 / H100 3,913.4 = 1.1176.
    # v4.1: 8x MI300X on the Turin host 3,013.7 / the shipped 8x H100 3,065.6 = 0.9831
    # (the H100 predicted at the held-out rows' shape, so both sides are one job).
    rows = {m.id: m for m in held_out()}
    h100_v41 = next(
        m for m in shipped_measurements() if m.id.startswith("mlperf-v4.1-llama2-70b-h1")
    )
    h100_at_265 = Measurement(**{**_fields(h100_v41), "input_tokens": 265, "output_tokens": 265})
    pairs = {
        "v5.0 H200/H100": (
            rows["mlperf-v5.0-llama2-70b-h200-8gpu-fp8-offline"],
            rows["mlperf-v5.0-llama2-70b-h100-sxm-8gpu-fp8-offline"],
            1.1176,
        ),
        "v4.1 MI300X/H100": (
            rows["mlperf-v4.1-llama2-70b-mi300x-8gpu-turin-fp8-offline"],
            h100_at_265,
            0.9831,
        ),
    }
    for name, (a, b, measured) in pairs.items():
        ratio = _per_gpu(a, shipped_measurements())[0] / _per_gpu(b, shipped_measurements())[0]
        print(f"{name}: predicted {ratio:.3f}, measured {measured}, {ratio / measured:.2f}x")
        assert 0.8 <= ratio / measured <= 1.25
