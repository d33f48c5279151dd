"""The A10G (AWS g5) ranks for serving from its own measurements (issue 16).

NVIDIA publishes no TFLOPS for this AWS-only part, so the datasheet model cannot rate it.
The shipped table carries Hugging Face's measured TGI 1.0.3 runs of Llama 2 7B in fp16 on
one A10G (ml.g5.2xlarge, philschmid/text-generation-inference-tests at 4373a85,
results/sagemaker/Llama-2-7b-hf_ml.g5.2xlarge_tp_1_vu_{1,10,20}.json): 50 new tokens per
request, 32.38 / 220.06 / 313.53 tokens/s with 1 / 10 / 20 requests in flight. Expected
figures below are those published numbers and arithmetic on them, never the code's output.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.recommend.test_calibration import offer
from tracker.catalog import get_spec
from tracker.recommend import load_profiles, make_profile, rank
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.calibration import Basis, predict
from tracker.recommend.fitted import _tokens_per_second, fit_serving
from tracker.recommend.measured import MeasurementError, parse_measurement, shipped_measurements
from tracker.recommend.profiles import Precision

# tokens/s published for 1, 10 and 20 virtual users (the files' "Thorughput (tokens/second)")
PUBLISHED = {1: 32.38, 10: 220.06, 20: 313.53}
SOURCE = (
    "https://github.com/philschmid/text-generation-inference-tests/blob/"
    "4373a85992198f116af57c7dd18d2f07f6d03bae/results/sagemaker/"
)


def _a10g_rows() -> list[Any]:
    return [m for m in shipped_measurements() if m.gpu == "A10G"]


def _llama2_7b(**over: Any) -> dict[str, Any]:
    """The measured job: Llama 2 7B in fp16, 230-token prompts (the rows' estimate of the
    ShareGPT mean) answered with 50 tokens."""
    fields: dict[str, Any] = dict(
        params=6.74e9,
        task="inference",
        precision="fp16",
        input_tokens=230,
        output_tokens=50,
        max_gpus=1,
    )
    return {**fields, **over}


def test_the_shipped_a10g_rows_are_hugging_faces_published_figures() -> None:
    rows = _a10g_rows()
    assert {m.concurrency: m.throughput for m in rows} == PUBLISHED
    for m in rows:
        assert m.gpu_count == 1 and m.precision is Precision.FP16
        assert (m.input_tokens, m.output_tokens) == (230, 50)
        assert m.source == f"{SOURCE}Llama-2-7b-hf_ml.g5.2xlarge_tp_1_vu_{m.concurrency}.json"


def test_the_fitted_rates_reproduce_every_published_throughput() -> None:
    a = Assumptions()
    spec = get_spec("A10G")
    fit = fit_serving(spec, _a10g_rows(), a)
    assert fit is not None
    for m in _a10g_rows():
        got = _tokens_per_second(m, spec, a, np.array([fit.flops]), np.array([fit.scale]))
        assert got[0] == pytest.approx(PUBLISHED[m.concurrency], rel=0.05)
    # One request at a time is bound by reading the weights: the published median of
    # 30.96 ms per token with 6.74e9 x 2 B = 13.48 GB of fp16 weights is at least
    # 13.48e9 / 0.03096 = 435 GB/s, more than the catalog's 600 GB/s x the assumed 0.60
    # (360 GB/s) and at most the 600 GB/s itself: 435/360 = 1.21 <= scale <= 600/360 = 1.67.
    assert 1.21 <= fit.scale <= 1.67
    # The ratio of 10 to 1 request in flight, 220.06 / 32.38 = 6.8x (not 10x), is the
    # batch's prefill and matmuls: the fitted compute is finite, inside the grid.
    assert 1e12 < fit.flops < 1024e12


@pytest.mark.parametrize("concurrency", [1, 20])
def test_the_measured_job_takes_the_measured_hours_on_a_g5(concurrency: int) -> None:
    # One hour of the measured throughput: 313.53 x 3600 = 1,128,708 tokens at 20 in
    # flight, 32.38 x 3600 = 116,568 at 1; a 1x A10G offer finishes each in 1 h (the fit
    # reproduces every row within 5 %).
    tokens = PUBLISHED[concurrency] * 3600
    p = make_profile("measured", _llama2_7b(concurrency=concurrency, tokens=tokens))
    (c,) = rank(p, [offer("A10G", 1, instance_type="g5.2xlarge")]).candidates
    assert c.rate.basis is Basis.MEASURED
    assert c.job_hours == pytest.approx(1.0, rel=0.05)


@pytest.mark.parametrize(("profile", "gpus"), [("llm-7b-inference", 1), ("llm-70b-inference", 8)])
def test_a_g5_offer_ranks_for_the_built_in_serving_profiles(profile: str, gpus: int) -> None:
    # g5.2xlarge (1x A10G, 24 GB) holds the 7B in fp16; g5.48xlarge (8x 24 GB = 192 GB)
    # holds the 70B's 140e9 B = 130 GiB of weights. Both are rated from the A10G's own rows.
    p = load_profiles().get(profile)
    ranking = rank(p, [offer("A10G", gpus), offer("L4", gpus)], explain=True)
    a10g = [c for c in ranking.candidates if c.offer.gpu_model == "A10G"]
    assert len(a10g) == 1
    rate = a10g[0].rate
    assert rate.basis is Basis.MEASURED and rate.label == "measured"
    assert "hf-tgi-llama2-7b-a10g-1gpu-fp16-c1" in rate.source
    assert "A10G has no datasheet TFLOPS" in rate.source
    assert any(n.startswith("A10G: basis measured, fitted to its own") for n in ranking.notes)


def test_without_the_a10g_rows_it_falls_back_to_its_stand_in_rule() -> None:
    # Its own rows gone, the A10G is rated as the A10 (issue 28's stated rule), flagged
    # modelled, at exactly the A10's rate.
    others = tuple(m for m in shipped_measurements() if m.gpu != "A10G")
    p = make_profile("serve", _llama2_7b(concurrency=20, tokens=1e6))
    rate = predict(p, get_spec("A10G"), Assumptions(), others)
    a10 = predict(p, get_spec("A10"), Assumptions(), others)
    assert rate is not None and a10 is not None
    assert rate.basis is Basis.MODELLED and rate.flops == a10.flops
    assert rate.source.startswith("A10G modelled as the A10")


def test_an_fp8_serving_job_runs_on_the_a10g_at_its_measured_fp16_and_says_so() -> None:
    p = make_profile("fp8", _llama2_7b(precision="fp8", concurrency=20, tokens=1e6))
    rate = predict(p, get_spec("A10G"), Assumptions(), shipped_measurements())
    assert rate is not None
    assert rate.precision is Precision.FP16
    assert rate.fallback.startswith("fp8 runs as fp16: A10G has no datasheet rates")


def test_your_a10g_serving_measurement_wins_over_the_shipped_rows() -> None:
    # Yours: 400 tokens/s offline (as many requests as fit) on 512/512 requests. The same
    # job of 400 x 3600 = 1,440,000 tokens then takes 1 h on one A10G (fit within 5 %).
    mine = parse_measurement(
        dict(
            id="mine",
            **{"class": "llm_inference"},
            model="my 7B",
            params=7e9,
            input_tokens=512,
            output_tokens=512,
            gpu="A10G",
            gpu_count=1,
            precision="fp16",
            throughput=400,
            unit="tokens/s",
        ),
        "profiles.toml",
        yours=True,
    )
    p = make_profile(
        "mine",
        dict(
            params=7e9,
            task="inference",
            precision="fp16",
            input_tokens=512,
            output_tokens=512,
            concurrency="max",
            tokens=400 * 3600,
            max_gpus=1,
        ),
    )
    table = (*shipped_measurements(), mine)
    (c,) = rank(p, [offer("A10G", 1)], measurements=table).candidates
    assert c.rate.label == "measured (yours)"
    assert "(mine;" in c.rate.source and "hf-tgi" not in c.rate.source
    assert c.job_hours == pytest.approx(1.0, rel=0.05)


@pytest.mark.parametrize(
    ("over", "message"),
    [
        (
            {"class": "cnn_training", "flops_per_image": 7.7e9, "unit": "images/s"},
            "concurrency: only llm_inference",
        ),
        ({"concurrency": 2.5}, "concurrency: must be a whole number"),
        ({"concurrency": 0}, "concurrency: must be > 0"),
    ],
)
def test_a_measured_concurrency_is_a_whole_number_of_served_requests(
    over: dict[str, Any], message: str
) -> None:
    body: dict[str, Any] = {
        "id": "r",
        "class": "llm_inference",
        "model": "m",
        "params": 7e9,
        "input_tokens": 128,
        "output_tokens": 128,
        "concurrency": 4,
        "gpu": "A10G",
        "gpu_count": 1,
        "precision": "fp16",
        "throughput": 100,
        "unit": "tokens/s",
        **over,
    }
    with pytest.raises(MeasurementError, match=message):
        parse_measurement(body, "profiles.toml", yours=True)
