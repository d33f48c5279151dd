"""TPUs, Trainium and Inferentia rank on the built-in 7B profiles, each on a cited basis
(issue 38).

Expected hours are worked out by hand from the published figures the shipped rows
record (tracker/recommend/measurements.toml), quoted in the comments:
AWS Neuron's trn1 pre-training table (aws-neuron-sdk general/benchmarks/trn1/
training_data_decoder.csv at 1351ee1, Neuron 2.16.0), its inf2/trn1 LLM serving tables
(at 5b489f8, Neuron 2.14.0) and MaxText's tiering table (docs/reference/models/tiering.md
at 20a91e1).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import make_offer
from tracker.catalog import get_spec
from tracker.models import Offer
from tracker.recommend import load_profiles, make_profile, rank
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.calibration import Basis, achieved_flops
from tracker.recommend.measured import (
    Measurement,
    MeasurementError,
    parse_measurement,
    shipped_measurements,
)

A = Assumptions()
NEURON_TRAIN = "aws-neuron-sdk/blob/1351ee128a6f9e48407a2609f1b162d379ec0cac/"
MAXTEXT = "maxtext/blob/20a91e12a17cbaa7b786ac388b192b63392cd855/"


def box(gpu: str, count: int, instance_type: str) -> Offer:
    """A host as the provider sells it: the link unstated, $2 per chip-hour."""
    return make_offer(
        instance_type=instance_type,
        gpu_model=gpu,
        gpu_count=Decimal(count),
        gpu_memory_gib=get_spec(gpu).vram_gib,
        interconnect="unknown",
        price_per_hour=Decimal("2.00") * count,
    )


BOXES = [
    box("Trainium1", 16, "trn1.32xlarge"),
    box("Inferentia2", 12, "inf2.48xlarge"),
    box("TPU-v5p", 4, "v5p-8"),
    box("TPU-v6e", 8, "v6e-8"),
]


def _row(row_id: str) -> Measurement:
    (m,) = [m for m in shipped_measurements() if m.id == row_id]
    return m


def test_a_multi_host_figure_takes_out_one_machines_scaling_only() -> None:
    # Neuron: Llama2-7B, 16 trn1.32xlarge nodes (256 chips), 93.3 seq/s of 4,096 tokens:
    # 93.3 x 4096 / 256 = 1,492.8 tokens/s per chip x 6 x 6.74e9 = 6.03688e13 FLOP/s;
    # one node's 16 chips on NeuronLink keep 0.95^4 = 0.814506 of it: 7.41171e13.
    # (All 256 chips' 0.95^8 = 0.663420 taken out would claim 9.09963e13.)
    m = _row("neuron-2.16-llama2-7b-trn1-256chip-bf16")
    assert achieved_flops(m, A) == pytest.approx(7.41171e13, rel=1e-5)
    # MaxText: v6e Llama 3.1 8B, 7,207 tokens/s/device on 256 chips (64 hosts of 4):
    # 7207 x 6 x 8.03e9 = 3.47233e14, / 0.95^2 = 0.9025: 3.84746e14
    v6e = _row("maxtext-llama31-8b-v6e-256chip-bf16")
    assert achieved_flops(v6e, A) == pytest.approx(3.84746e14, rel=1e-5)


def test_built_in_profiles_do_not_exclude_12_and_16_chip_boxes() -> None:
    # trn1.32xlarge has 16 chips, inf2.48xlarge 12: "at most 8" used to drop both
    for name in ("llm-7b-inference", "llm-7b-full-finetune", "llm-7b-lora"):
        ranked = {c.offer.instance_type for c in rank(load_profiles().get(name), BOXES).candidates}
        assert {"trn1.32xlarge", "v5p-8", "v6e-8"} <= ranked, name
    serving = rank(load_profiles().get("llm-7b-inference"), BOXES).candidates
    assert "inf2.48xlarge" in {c.offer.instance_type for c in serving}
    # a user's own cap still applies
    capped = make_profile(
        "cap", dict(params=7e9, task="inference", precision="fp16", tokens=1e8, max_gpus=8)
    )
    kept = {c.offer.instance_type for c in rank(capped, BOXES).candidates}
    assert kept == {"v5p-8", "v6e-8"}


def test_v5p_v6e_and_trainium1_rank_for_7b_fine_tuning_on_their_own_measurements() -> None:
    # 1e9 tokens x 6 x 7e9 = 4.2e19 FLOPs on each box, at the chip's measured rate x the
    # box's scaling (0.95 per doubling on ICI / NeuronLink):
    # trn1.32xlarge: 16 x 7.41171e13 x 0.95^4 = 9.65901e14 FLOP/s: 43,483 s = 12.078 h
    # v6e-8: 8 x 3.84746e14 x 0.95^3 = 2.63897e15: 15,915 s = 4.4209 h
    # v5p-8 (4 chips): Llama 2 70B row 692 x 6 x 70e9 / 0.9025 = 3.22039e14 per chip;
    #   4 x 3.22039e14 x 0.9025 = 1.16256e15: 36,128 s = 10.035 h
    ranking = rank(load_profiles().get("llm-7b-full-finetune"), BOXES, explain=True)
    by = {c.offer.instance_type: c for c in ranking.candidates}
    expected = {"trn1.32xlarge": 12.078, "v6e-8": 4.4209, "v5p-8": 10.035}
    for instance, hours in expected.items():
        c = by[instance]
        assert c.rate.basis is Basis.MEASURED and c.uncertainty == 0.15
        assert c.job_hours == pytest.approx(hours, rel=1e-3)
    notes = {n.split(":")[0]: n for n in ranking.notes}
    assert notes["Trainium1"].startswith(
        "Trainium1: basis measured, neuron-2.16-llama2-7b-trn1-256chip-bf16 (https://github.com/"
        "aws-neuron/" + NEURON_TRAIN
    )
    assert "maxtext-llama31-8b-v6e-256chip-bf16" in notes["TPU-v6e"] and MAXTEXT in notes["TPU-v6e"]
    assert "maxtext-llama2-70b-v5p-512chip-bf16" in notes["TPU-v5p"]
    # equal $2/chip-hour: the v6e-8 is cheapest (8 x 4.4209 x $2 = $70.73)
    assert ranking.candidates[0].offer.instance_type == "v6e-8"
    assert ranking.candidates[0].job_cost_usd == Decimal("70.73")


def test_inferentia2_and_trainium1_serve_7b_on_their_neuron_measurements() -> None:
    # No Neuron row has the profile's 512/512 shape: each chip's serving rate is its own
    # measured/modelled ratio at the nearest size (Llama 2 13B, 64/192, Neuron 2.14.0),
    # shown with the ±35 % of an unmeasured request shape.
    ranking = rank(load_profiles().get("llm-7b-inference"), BOXES, explain=True)
    by = {c.offer.gpu_model: c for c in ranking.candidates}
    for gpu, row in (
        ("Inferentia2", "neuron-2.14-llama2-13b-inf2-12chip-fp16-64-192"),
        ("Trainium1", "neuron-2.14-llama2-13b-trn1-16chip-fp16-64-192"),
    ):
        c = by[gpu]
        assert c.rate.basis is Basis.MEASURED and c.uncertainty == 0.35
        assert c.rate.source.startswith(f"{row} (https://github.com/aws-neuron/aws-neuron-sdk/")
    notes = [n for n in ranking.notes if n.startswith(("Inferentia2:", "Trainium1:"))]
    assert len(notes) == 2 and all("basis measured" in n for n in notes)


def test_a_tpu_generation_scaled_from_another_says_so_and_widens() -> None:
    # No TPU v5e row in LLM training: scaled from the nearest measured part, which is not
    # its own generation, so the range is ±35 % and the source says why.
    ranking = rank(load_profiles().get("llm-7b-lora"), [box("TPU-v5e", 4, "v5litepod-4")])
    (c,) = ranking.candidates
    assert c.rate.basis is Basis.SCALED and c.uncertainty == 0.35
    assert "scaled across vendors" in c.rate.source or "no TPU v5e measured" in c.rate.source


def test_neuron_serving_rows_are_the_published_figures() -> None:
    # Inf2.48xlarge, OPT-13B at TP degree 8 (8 NeuronCores = 4 chips), batch 256, 9/119:
    # 3,014.3 tokens/s; trn1.32xlarge, Llama 2 13B at TP 32 (16 chips), batch 1: 152.5
    inf2 = _row("neuron-2.14-opt-13b-inf2-4chip-fp16-9-119")
    trn1 = _row("neuron-2.14-llama2-13b-trn1-16chip-fp16-64-192")
    assert (inf2.throughput, inf2.gpu_count, inf2.tensor_parallel) == (3014.3, 4, 4)
    assert (trn1.throughput, trn1.gpu_count, trn1.concurrency) == (152.5, 16, 1)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (dict(hosts=32), "hosts: 32 machines for 16 GPUs"),
        (dict(tensor_parallel=3), "tensor_parallel: a serving row's GPUs in whole replicas"),
    ],
)
def test_hosts_and_tensor_parallel_are_checked(extra: dict[str, int], message: str) -> None:
    body = dict(
        id="x",
        **{"class": "llm_inference"},
        model="m",
        params=7e9,
        gpu="Trainium1",
        gpu_count=16,
        precision="fp16",
        throughput=100.0,
        unit="tokens/s",
        input_tokens=64,
        output_tokens=192,
        conditions="c",
        source="https://example.org/x",
        date="d",
        **extra,
    )
    with pytest.raises(MeasurementError, match=message):
        parse_measurement(body, "here")


def test_serving_rated_from_another_vendors_measurement_widens_and_says_so() -> None:
    # Llama 7B bf16 at TensorRT-LLM's measured 128/2048 shape, one chip: no Google serving
    # row exists, so the TPU v6e takes the A100 80GB's measured/modelled ratio (same
    # shape: no shape widening) and shows ±35 %, naming the other vendor; the H100, rated
    # from its own fp8 row of that shape, keeps the scaled ±25 %.
    p = make_profile(
        "7b-128-2048",
        dict(
            params=6.74e9,
            task="inference",
            precision="bf16",
            input_tokens=128,
            output_tokens=2048,
            concurrency="max",
            tokens=1e9,
            max_gpus=1,
        ),
    )
    (tpu,) = rank(p, [box("TPU-v6e", 1, "v6e-1")]).candidates
    assert tpu.rate.basis is Basis.SCALED and tpu.uncertainty == 0.35
    assert tpu.rate.source.startswith("from A100-80GB by the serving model: ")
    assert tpu.rate.source.endswith("another vendor's serving stack (NVIDIA): ±35%")
    (h100,) = rank(p, [box("H100-SXM", 1, "h100-1")]).candidates
    assert h100.uncertainty == 0.25
