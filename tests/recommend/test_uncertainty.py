"""Estimate ranges, the close-call note and the fit's held-out errors (issue 28).

Every figure compared against is a shipped measurement (tracker/recommend/measurements.toml:
each row names its source, harness and date), never the code's own output:
Lambda's deeplearning-benchmark pytorch-train-throughput-fp16.csv (at 0551cb7, undated;
PyTorch NGC + DeepLearningExamples, AMP, 1 GPU), MosaicML llm-foundry's benchmarking
README (at 061f2c7, 8 GPUs, bf16) and NVIDIA Megatron-Bridge's performance summary (NeMo
25.11, 8 GPUs, fp8).
"""

from __future__ import annotations

import math
from collections import defaultdict
from decimal import Decimal

import pytest

from tests.recommend.test_calibration import _TASK, RESNET50, _profile_for, offer
from tests.recommend.test_held_out import serving_job
from tracker.catalog import get_spec
from tracker.recommend import make_profile, rank
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.calibration import Basis, achieved_flops, predict
from tracker.recommend.kinds import WorkloadClass
from tracker.recommend.measured import Measurement, shipped_measurements
from tracker.recommend.uncertainty import BANDS, CARRIED, CLOSE_CALL, relative_error

A = Assumptions()


def _training_rows() -> list[Measurement]:
    return [m for m in shipped_measurements() if m.workload_class in _TASK]


def _held_out(whole_gpu: bool) -> list[tuple[Measurement, Basis | None, float]]:
    """Each training row predicted without itself (or without its GPU's rows in its
    class): (row, basis, predicted ÷ measured - 1); NaN where nothing rates it."""
    return [(m, b, e) for m, b, e, _band in _held_out_bands(whole_gpu)]


def _held_out_bands(whole_gpu: bool) -> list[tuple[Measurement, Basis | None, float, float]]:
    """As :func:`_held_out`, with the ± band the prediction itself carries."""
    rows = _training_rows()
    out = []
    for m in rows:
        others = tuple(
            r
            for r in rows
            if r is not m
            and not (whole_gpu and r.gpu == m.gpu and r.workload_class is m.workload_class)
        )
        rate = predict(_profile_for(m), get_spec(m.gpu), A, others)
        if rate is None:
            out.append((m, None, math.nan, math.nan))
            continue
        error = rate.flops / achieved_flops(m, A) - 1
        out.append((m, rate.basis, error, relative_error(rate)))
    return out


def _serving_held_out() -> list[tuple[Measurement, float]]:
    """Each serving row's job (its model, request shape, load and GPUs) costed without
    that row: (row, predicted ÷ measured tokens/s - 1)."""
    rows = shipped_measurements()
    out = []
    for m in rows:
        if m.workload_class is not WorkloadClass.LLM_INFERENCE:
            continue
        others = tuple(r for r in rows if r is not m)
        job = serving_job(m)
        (c,) = rank(job, [offer(m.gpu, int(m.gpu_count))], measurements=others).candidates
        assert c.job_hours is not None
        out.append((m, 1e9 / (c.job_hours * 3600) / m.throughput - 1))
    return out


def _within(errors: list[float]) -> tuple[int, int]:
    return sum(e <= 0.25 for e in errors), len(errors)


def test_leave_one_out_error_per_workload_class() -> None:
    # The Done-when target: at least 90 % of job-time predictions within ±25 % of the
    # held-out measurement. Printed per class: the figures docs/incoming/i28.md reports.
    # Serving rows: TensorRT-LLM's performance tables (v0.5-v1.0), MLPerf Inference v4.1
    # (2024-08-28) and Hugging Face's TGI 1.0.3 runs on a g5.2xlarge (2023).
    per_class: dict[str, list[float]] = defaultdict(list)
    per_gpu_kind: dict[bool, list[float]] = defaultdict(list)
    found = [(m, abs(e)) for m, e in _serving_held_out()]
    # no rate at all would count as a miss
    found += [(m, math.inf if math.isnan(e) else abs(e)) for m, _b, e in _held_out(False)]
    for m, error in found:
        per_class[m.workload_class.value].append(error)
        per_gpu_kind[get_spec(m.gpu).kind == "accelerator"].append(error)
    hits = total = 0
    for wclass, errors in sorted(per_class.items()):
        within = sum(e <= 0.25 for e in errors)
        median = sorted(errors)[len(errors) // 2]
        print(f"{wclass}: {within}/{len(errors)} within ±25 %, median {median:.0%}")
        hits, total = hits + within, total + len(errors)
    print(f"all: {hits}/{total} within ±25 %")
    assert total == 81
    # GPUs (NVIDIA, AMD): the target, 90 %. Accelerators (AWS Neuron, Google TPU rows):
    # reported, and held at what they reach (not the target: Neuron's OPT-13B and -30B
    # rows on the same 4 chips disagree by 1.5x about the serving model, so each
    # predicted from the other misses by 32-57 %).
    gpu_hits, gpu_total = _within(per_gpu_kind[False])
    acc_hits, acc_total = _within(per_gpu_kind[True])
    print(f"GPUs: {gpu_hits}/{gpu_total}; accelerators: {acc_hits}/{acc_total}")
    assert gpu_total == 68 and gpu_hits / gpu_total >= 0.90, f"{gpu_hits}/{gpu_total}"
    assert acc_total == 13 and acc_hits >= 6


@pytest.mark.parametrize(("basis", "whole_gpu"), [(Basis.MEASURED, False), (Basis.SCALED, True)])
def test_each_basis_band_covers_90_percent_of_its_held_out_errors(
    basis: Basis, whole_gpu: bool
) -> None:
    # measured: this GPU's other sizes in the class (a row held out); scaled: another
    # GPU's rows (all of the GPU's rows in the class held out). Each error against the
    # band its own rate carries: a scaled rate from another vendor's part (Trainium1 and
    # the TPUs from NVIDIA's, calibration._other_vendor) or with a carried family factor
    # shows ±35 %, not the scaled ±25 %.
    found = [(abs(e), band) for _m, b, e, band in _held_out_bands(whole_gpu) if b is basis]
    assert len(found) >= 20
    covered = sum(e <= band for e, band in found) / len(found)
    assert covered >= 0.90, f"{basis}: {covered:.0%} within their bands"
    # the plain scaled band still holds where the nearest measured part is the same vendor's
    plain = [e for e, band in found if band == BANDS[basis]]
    assert sum(e <= BANDS[basis] for e in plain) / len(plain) >= 0.90


def test_relative_speed_against_the_h100_with_each_gpu_held_out() -> None:
    # Each GPU's rows in a class held out, its speed relative to the H100-SXM's on the
    # same model predicted and compared with the measured ratio (e.g. Lambda resnet50:
    # A100 80GB SXM4 1582 / H100 SXM5 2616 = 0.605). The RTX 6000 Ada is rated by its
    # 16-bit rule (its datasheet prints FP8 only: tracker/recommend/stand_in.py).
    rows = _training_rows()
    per_gpu: dict[str, list[float]] = defaultdict(list)
    for m in rows:
        ref = [
            r
            for r in rows
            if r.gpu == "H100-SXM" and r.model == m.model and r.precision == m.precision
        ]
        if m.gpu == "H100-SXM" or not ref:
            continue
        others = tuple(
            r for r in rows if not (r.gpu == m.gpu and r.workload_class is m.workload_class)
        )
        p = _profile_for(m)
        mine = predict(p, get_spec(m.gpu), A, others)
        h100 = predict(p, get_spec("H100-SXM"), A, others)
        assert mine is not None and h100 is not None
        measured = achieved_flops(m, A) / achieved_flops(ref[0], A)
        per_gpu[m.gpu].append(mine.flops / h100.flops / measured)
    ratios = [q for qs in per_gpu.values() for q in qs]
    inside = sum(0.8 <= q <= 1.25 for q in ratios)
    # per GPU: the geometric mean of its rows' predicted ÷ measured ratio
    means = {g: math.exp(sum(map(math.log, qs)) / len(qs)) for g, qs in per_gpu.items()}
    gpus_inside = sorted(g for g, q in means.items() if 0.8 <= q <= 1.25)
    print(
        f"relative speed within 0.8-1.25x: {inside}/{len(ratios)} rows, "
        f"{len(gpus_inside)}/{len(means)} GPUs; outside: "
        f"{ {g: round(q, 2) for g, q in means.items() if g not in gpus_inside} }"
    )
    assert len(ratios) == 34 and len(means) == 11
    # The target, 90 % of GPUs: 10 of 11 (the RTX 6000 Ada, 1.31x, is the miss).
    # Row by row 28 of 34 (82 %), held so the fit cannot silently get worse.
    assert len(gpus_inside) >= 10
    assert inside >= 28


def test_a_measured_estimate_carries_its_band_as_a_range() -> None:
    # ResNet-50 on one H100: 1,281,167 x 90 / 2616 images/s = 12.2435 h (measured, ±15 %):
    # 12.2435 x 0.85 = 10.407 h to 12.2435 x 1.15 = 14.080 h
    (c,) = rank(make_profile("r50", RESNET50), [offer("H100-SXM", 1)]).candidates
    assert c.uncertainty == 0.15
    assert c.job_hours_low == pytest.approx(10.407, abs=1e-3)
    assert c.job_hours_high == pytest.approx(14.080, abs=1e-3)


def test_bands_widen_from_measured_to_scaled_to_carried_to_modelled() -> None:
    # A10: measured; L40S: scaled from the RTX 4090 (same Ada family, measured in the
    # class); B200: scaled from the H100 x Blackwell's delivery in LLM training (carried);
    # A10G: its stand-in rule (modelled).
    ranking = rank(
        make_profile("r50", RESNET50), [offer(g, 1) for g in ("A10", "L40S", "B200", "A10G")]
    )
    band = {c.offer.gpu_model: c.uncertainty for c in ranking.candidates}
    assert band == {"A10": 0.15, "L40S": 0.25, "B200": CARRIED, "A10G": 0.50}


def test_the_close_call_note_when_the_two_cheapest_ranges_overlap() -> None:
    # A10 ($0.75/h) and A10G ($0.80/h) both run ResNet-50 in 50.2025 h (the A10G as the
    # A10): $37.65 (±15 %: 32.00-43.30) and $40.16 (±50 %: 20.08-60.24) overlap.
    ranking = rank(
        make_profile("r50", RESNET50), [offer("A10", 1, "0.75"), offer("A10G", 1, "0.80")]
    )
    assert [c.job_cost_usd for c in ranking.candidates] == [Decimal("37.65"), Decimal("40.16")]
    assert ranking.close_call is not None and ranking.close_call.endswith(CLOSE_CALL)
    assert "$32.00-43.30, ±15%" in ranking.close_call
    # an H100 at $10/h: 12.2435 h = $122.44 (104.07-140.80) is far above 43.30: no note
    far = rank(make_profile("r50", RESNET50), [offer("A10", 1, "0.75"), offer("H100-SXM", 1, "10")])
    assert far.close_call is None


def test_no_work_size_means_no_range() -> None:
    p = make_profile("rate", dict(params=7e9, task="lora", precision="bf16"))
    (c,) = rank(p, [offer("H100-SXM", 1)]).candidates
    assert c.job_hours is None and c.job_hours_low is None and c.job_hours_high is None


# --- delivered efficiency carried across workload classes (tracker/recommend/delivery.py)


def test_blackwell_carries_the_b200s_measured_delivery_into_resnet50() -> None:
    # Megatron-Bridge performance summary (NeMo 25.11, docs/performance-summary.md at
    # 00b7660), Llama 3 8B fp8 on 8 GPUs: B200 30,624 vs H100 14,451 tokens/s/GPU =
    # 2.11916x. The roofline from the H100 (the only other fp8 LLM-training GPU, so the
    # default 256 FLOPs/byte): B200 1/(1/4.5e15 + 1/(256 x 7.7e12)) = 1.37074e15, H100
    # 1/(1/1.979e15 + 1/(256 x 3.35e12)) = 5.98320e14: 2.29098x. Blackwell delivered
    # 2.11916 / 2.29098 = 0.92500 of its roofline, and no Blackwell GPU is measured on a
    # CNN: the B200's ResNet-50 rate is the roofline's x 0.925, flagged ±35 %.
    from tracker.recommend.delivery import carried_delivery
    from tracker.recommend.kinds import WorkloadClass

    d = carried_delivery(get_spec("B200"), WorkloadClass.CNN_TRAINING, shipped_measurements(), A)
    assert d is not None
    assert d.factor == pytest.approx(0.92500, abs=1e-4)
    assert d.rows == ("megatron-bridge-25.11-llama3-8b-b200-8gpu-fp8",)
    plain = predict(
        make_profile("r50", RESNET50),
        get_spec("B200"),
        A,
        tuple(m for m in shipped_measurements() if m.gpu != "B200"),
    )
    carried = predict(make_profile("r50", RESNET50), get_spec("B200"), A, shipped_measurements())
    assert plain is not None and carried is not None
    assert carried.flops == pytest.approx(plain.flops * 0.92500, rel=1e-4)
    assert carried.spread == CARRIED and "NVIDIA Blackwell delivered 0.92" in carried.source
    # measured in its own class, nothing is carried: the B200's 8B pre-training is its row
    assert (
        carried_delivery(get_spec("B200"), WorkloadClass.LLM_TRAINING, shipped_measurements(), A)
        is None
    )


def test_the_mi300x_trains_at_its_mlperf_delivery_not_its_datasheet() -> None:
    # No AMD GPU is measured training anything; MLPerf Inference v4.1 (Llama 2 70B
    # offline, 2024-08-28) measured the MI300X at 23,514.8 against the H100's 24,524.9
    # tokens/s (0.9588x) where the serving model on the datasheets says ~1.5x. That
    # shortfall carries into training: the ResNet-50 ratio to the H100 drops from the
    # datasheet roofline's (above 1.5x) to below 1.25x, flagged ±35 %.
    ranking = rank(make_profile("r50", RESNET50), [offer("MI300X", 1), offer("H100-SXM", 1)])
    hours = {c.offer.gpu_model: c for c in ranking.candidates}
    mi300x, h100 = hours["MI300X"], hours["H100-SXM"]
    assert mi300x.job_hours is not None and h100.job_hours is not None
    assert h100.job_hours / mi300x.job_hours < 1.25
    assert mi300x.uncertainty == CARRIED and "AMD CDNA 3 delivered" in mi300x.rate.source
    no_mlperf = tuple(m for m in shipped_measurements() if m.gpu != "MI300X")
    plain = predict(make_profile("r50", RESNET50), get_spec("MI300X"), A, no_mlperf)
    assert plain is not None and plain.flops / h100.rate.flops > 1.5


def test_serving_away_from_a_measured_shape_averages_the_gpus_shapes_and_widens() -> None:
    # TensorRT-LLM's A100-80GB LLaMA 7B fp16 rows (128/128, 128/2048, 2048/128): at the
    # built-in profile's 512/512 none matches, so the GPU's measured/modelled ratio is
    # their geometric mean and the error ±35 %; at a measured shape, that row alone, ±15 %.
    from tracker.recommend import load_profiles

    (c,) = rank(load_profiles().get("llm-7b-inference"), [offer("A100-80GB", 1)]).candidates
    assert c.uncertainty == 0.35 and "(geometric mean)" in c.rate.source
    for shape in ("128-128", "128-2048", "2048-128"):
        assert f"trtllm-llama-7b-a100-80gb-1gpu-fp16-{shape}" in c.rate.source
    inp, out = 128, 2048
    exact = make_profile(
        "exact",
        dict(
            params=6.74e9,
            task="inference",
            precision="fp16",
            input_tokens=inp,
            output_tokens=out,
            concurrency="max",
            tokens=1e9,
            max_gpus=1,
        ),
    )
    (e,) = rank(exact, [offer("A100-80GB", 1)]).candidates
    assert e.uncertainty == 0.15 and "(geometric mean)" not in e.rate.source


def test_explain_says_each_gpus_error() -> None:
    ranking = rank(make_profile("r50", RESNET50), [offer("A10", 1), offer("A10G", 1)], explain=True)
    lines = {n.split(":")[0]: n for n in ranking.notes if n.startswith(("A10:", "A10G:"))}
    assert lines["A10"].endswith("; job hours ±15%")
    assert lines["A10G"].endswith("; job hours ±50%")
