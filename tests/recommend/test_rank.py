"""Ranking on hand-built offer sets: fit, speed vs price, spot, reserved, interconnect."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import make_offer
from tracker.catalog import get_spec
from tracker.models import Offer
from tracker.recommend import Ranking, Reason, make_profile
from tracker.recommend import rank as calibrated_rank
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.profiles import Profile

_ids = itertools.count()


def rank(*args: Any, **kw: Any) -> Ranking:
    """The ranker on the datasheet efficiency model alone (the ``modelled`` basis).

    These tests pin the mechanics (fit, price vs speed, spot, reservations, interconnect)
    and the model's hand-worked arithmetic; with no measurements every GPU is modelled.
    Estimates calibrated against the shipped measurements: tests/recommend/test_calibration.py.
    """
    return calibrated_rank(*args, measurements=(), **kw)


def offer(gpu: str, count: int | str, price: str, **kw: Any) -> Offer:
    spec = get_spec(gpu)
    fields: dict[str, Any] = {
        "instance_type": kw.pop("instance_type", f"t{next(_ids)}.{gpu.lower()}x{count}"),
        "gpu_model": gpu,
        "gpu_count": Decimal(count),
        "gpu_memory_gib": kw.pop("gpu_memory_gib", spec.vram_gib),
        "price_per_hour": Decimal(price),
        "interconnect": kw.pop("interconnect", "nvlink" if Decimal(count) > 1 else "pcie"),
    }
    fields.update(kw)
    return make_offer(**fields)


def job(**fields: Any) -> Profile:
    return make_profile("job", fields)


LORA_7B = dict(params=7e9, task="lora", precision="bf16", tokens=80e6)
FULL_7B = dict(params=7e9, task="full_finetune", precision="bf16", tokens=1e9)


def names(offers: list[Offer]) -> list[str]:
    return [o.instance_type for o in offers]


# --- fit ---------------------------------------------------------------------------


def test_a_job_that_does_not_fit_is_never_recommended_however_cheap() -> None:
    cheap_single = offer("A100-80GB", 1, "0.50", instance_type="one-a100")
    node = offer("A100-80GB", 8, "40.00", instance_type="eight-a100")
    ranking = rank(job(**FULL_7B, max_gpus=8), [cheap_single, node], explain=True)
    assert names([c.offer for c in ranking.candidates]) == ["eight-a100"]
    (excluded,) = ranking.exclusions
    assert excluded.offer is cheap_single and excluded.reason is Reason.VRAM
    assert "needs 105.8 GiB per GPU, has 80.0 GiB per GPU" in excluded.detail
    c = ranking.candidates[0]
    assert c.sharded and c.vram_needed_per_gpu_gib < 80
    assert c.vram_available_gib == 640


def test_fractional_gpu_offers_slice_vram_and_a_fraction_of_the_compute() -> None:
    bert = job(params=110e6, task="full_finetune", precision="fp16", tokens=150e6, batch_size=8)
    # VRAM is per whole GPU (as Azure reports NVadsA10 v5): the slice has 24 x 1/6 GiB.
    slice_ = offer("A10", "0.1666666667", "0.20", gpu_memory_gib=Decimal(24), instance_type="a10/6")
    whole = offer("A10", 1, "1.50", gpu_memory_gib=Decimal(24), instance_type="a10")
    ranking = rank(bert, [slice_, whole])
    by_name = {c.offer.instance_type: c for c in ranking.candidates}
    assert by_name["a10/6"].vram_available_gib == pytest.approx(4, rel=1e-6)
    assert by_name["a10/6"].job_hours == pytest.approx(by_name["a10"].job_hours * 6, rel=1e-6)
    too_big = job(**LORA_7B)
    assert rank(too_big, [slice_]).excluded_counts == {"vram": 1}


# --- speed vs price ----------------------------------------------------------------


def _h100_vs_l4(h100_price_factor: float) -> tuple[list[str], dict[str, Any]]:
    ratio = float(get_spec("H100-SXM").bf16_tflops or 0) / float(get_spec("L4").bf16_tflops or 1)
    l4_price = Decimal("0.80")
    h100_price = (l4_price * Decimal(str(ratio * h100_price_factor))).quantize(Decimal("0.0001"))
    offers = [
        offer("L4", 1, str(l4_price), instance_type="l4"),
        offer("H100-SXM", 1, str(h100_price), instance_type="h100"),
    ]
    ranking = rank(job(**LORA_7B), offers)
    by_name = {c.offer.instance_type: c for c in ranking.candidates}
    assert by_name["h100"].price_per_hour_usd > by_name["l4"].price_per_hour_usd
    assert by_name["l4"].job_hours == pytest.approx(by_name["h100"].job_hours * ratio)
    return names([c.offer for c in ranking.candidates]), by_name


def test_faster_gpu_wins_when_the_job_costs_less_on_it_despite_a_higher_hourly_price() -> None:
    order, by_name = _h100_vs_l4(0.8)
    assert order == ["h100", "l4"]
    assert by_name["h100"].job_cost_usd < by_name["l4"].job_cost_usd


def test_cheaper_slower_gpu_wins_when_the_faster_one_costs_more_for_the_job() -> None:
    order, by_name = _h100_vs_l4(1.25)
    assert order == ["l4", "h100"]
    assert by_name["l4"].job_cost_usd < by_name["h100"].job_cost_usd


# --- spot --------------------------------------------------------------------------

# ~105 h of LoRA work on one H100: long enough for interruptions to matter.
LONG_LORA = dict(LORA_7B, tokens=4e9, interruptible=True)


def _spot_vs_on_demand(interruption_pct: int | None, **profile: Any) -> list[str]:
    attrs = {} if interruption_pct is None else {"interruption_max_pct": interruption_pct}
    offers = [
        offer("H100-SXM", 1, "4.00", instance_type="od"),
        # a 5 % discount
        offer(
            "H100-SXM",
            1,
            "3.80",
            instance_type="spot",
            pricing="spot",
            zone="us-east-1a",
            attributes=attrs,
        ),
    ]
    ranking = rank(job(**{**LONG_LORA, **profile}), offers)
    spot = next(c for c in ranking.candidates if c.offer.instance_type == "spot")
    assert spot.compute_hours > 80
    assert spot.job_hours > spot.compute_hours  # expected re-work is always added
    return names([c.offer for c in ranking.candidates])


def test_spot_wins_when_its_discount_outweighs_the_expected_rework() -> None:
    # "<5%" bucket, no checkpoints: ~0.35 % re-work < 5 % discount
    assert _spot_vs_on_demand(5)[0] == "spot"


def test_spot_loses_when_expected_rework_exceeds_its_discount() -> None:
    # ">20%" bucket (upper bound 100): restarting ~105 h from scratch costs ~7 % > 5 %
    assert _spot_vs_on_demand(100)[0] == "od"


def test_checkpointing_shrinks_the_rework_so_spot_wins_again() -> None:
    assert _spot_vs_on_demand(100, checkpoint_interval_hours=1.0)[0] == "spot"


def test_spot_without_a_published_bucket_uses_the_configurable_default() -> None:
    offers = [
        offer("H100-SXM", 1, "4.00", instance_type="od"),
        offer("H100-SXM", 1, "3.80", instance_type="spot", pricing="spot", zone="us-east-1a"),
    ]
    p = job(**LONG_LORA)
    calm = rank(p, offers, Assumptions(default_interruption_pct=5))
    stormy = rank(p, offers, Assumptions(interruption_pct_by_provider={"testcloud": 100}))
    assert names([c.offer for c in calm.candidates])[0] == "spot"
    assert names([c.offer for c in stormy.candidates])[0] == "od"
    assert calm.candidates[0].interruption_pct == 5


def test_spot_is_excluded_unless_the_profile_is_interruptible() -> None:
    spot = offer("H100-SXM", 1, "1.00", pricing="spot", zone="us-east-1a")
    ranking = rank(job(**LORA_7B), [spot], explain=True)
    assert not ranking.candidates
    assert ranking.exclusions[0].reason is Reason.SPOT_NOT_ALLOWED


# --- reserved ----------------------------------------------------------------------


def _reserved_offers() -> list[Offer]:
    return [
        offer("H100-SXM", 1, "4.00", instance_type="od"),
        offer(
            "H100-SXM",
            1,
            "2.50",
            instance_type="r1",
            pricing="reserved_1y",
            payment_option="no_upfront",
        ),
        offer(
            "H100-SXM",
            1,
            "1.80",
            instance_type="r3",
            pricing="reserved_3y",
            payment_option="no_upfront",
        ),
    ]


@pytest.mark.parametrize(
    ("horizon", "expected"),
    [(0, ["od"]), (6, ["od"]), (12, ["r1", "od"]), (35, ["r1", "od"]), (36, ["r3", "r1", "od"])],
)
def test_reserved_appears_only_when_the_horizon_covers_the_term(
    horizon: int, expected: list[str]
) -> None:
    # full utilization: the term's hours are all the job's (see the utilization tests below)
    p = job(**LORA_7B, horizon_months=horizon, utilization=1)
    ranking = rank(p, _reserved_offers(), explain=True)
    assert names([c.offer for c in ranking.candidates]) == expected
    for e in ranking.exclusions:
        assert e.reason is Reason.RESERVED_TERM
        assert f"horizon is {horizon} months" in e.detail


def test_reserved_cost_uses_the_amortised_upfront_when_the_collector_recorded_it() -> None:
    # $8,760 upfront over 8,760 h + $0.50/h recurring = $1.50 per hour of the term
    r = offer(
        "H100-SXM",
        1,
        "1.4999",
        pricing="reserved_1y",
        payment_option="partial_upfront",
        attributes={"upfront_usd": "8760", "recurring_hourly_usd": "0.5"},
    )
    (c,) = rank(job(**LORA_7B, horizon_months=12, utilization=1), [r]).candidates
    assert c.effective_hourly_usd == Decimal("1.5")
    assert c.job_cost_usd == (Decimal("1.5") * Decimal(f"{c.job_hours:.6f}")).quantize(
        Decimal("0.01")
    )


# --- interconnect ------------------------------------------------------------------


def test_multi_gpu_training_without_nvlink_is_penalised() -> None:
    nv = offer("A100-80GB", 8, "30.00", interconnect="nvlink", instance_type="nvlink")
    pcie = offer("A100-80GB", 8, "30.00", interconnect="pcie", instance_type="pcie")
    ranking = rank(job(**LORA_7B, min_gpus=8), [pcie, nv])
    by_name = {c.offer.instance_type: c for c in ranking.candidates}
    assert names([c.offer for c in ranking.candidates]) == ["nvlink", "pcie"]
    assert by_name["pcie"].job_hours > by_name["nvlink"].job_hours * 1.5


def test_nvlink_required_excludes_pcie_multi_gpu_but_not_single_gpus() -> None:
    pcie8 = offer("A100-80GB", 8, "10.00", interconnect="pcie")
    single = offer("A100-80GB", 1, "3.00", interconnect="pcie")
    ranking = rank(job(**LORA_7B, interconnect="required"), [pcie8, single], explain=True)
    assert [c.offer for c in ranking.candidates] == [single]
    assert ranking.exclusions[0].reason is Reason.INTERCONNECT


def test_training_state_is_sharded_over_pcie_only_when_the_profile_accepts_any() -> None:
    pcie = offer("A100-80GB", 8, "20.00", interconnect="pcie", instance_type="pcie")
    nv = offer("A100-80GB", 8, "32.00", interconnect="nvlink", instance_type="nvlink")
    preferred = rank(job(**FULL_7B), [pcie, nv], explain=True)
    assert names([c.offer for c in preferred.candidates]) == ["nvlink"]
    assert preferred.exclusions[0].reason is Reason.VRAM  # a full replica per GPU
    anyway = rank(job(**FULL_7B, interconnect="any"), [pcie, nv])
    by_name = {c.offer.instance_type: c for c in anyway.candidates}
    assert by_name["pcie"].sharded
    # cheaper per hour but ZeRO-3 over PCIe is so much slower that NVLink still wins
    assert names([c.offer for c in anyway.candidates]) == ["nvlink", "pcie"]


# --- exclusions and output ---------------------------------------------------------


def test_unknown_gpus_and_missing_precision_figures_are_excluded_never_guessed() -> None:
    mystery = make_offer(
        gpu_model="Quantum Flux 9000",
        gpu_known=False,
        gpu_count=Decimal(1),
        gpu_memory_gib=Decimal(96),
        price_per_hour=Decimal("0.10"),
    )
    # NVIDIA publishes no throughput at all for the M60, and no rule stands in for it.
    # (The T4, fp16-only, runs a bf16 job in fp16: test_calibration.py; the P100 at its
    # datasheet's CUDA-core rate: test_stand_in.py.)
    m60 = offer("M60", 1, "0.30")
    t4 = offer("T4", 1, "0.30")
    ranking = rank(job(**LORA_7B), [mystery, m60], explain=True)
    assert not ranking.candidates
    reasons = {e.offer.gpu_model: (e.reason, e.detail) for e in ranking.exclusions}
    assert reasons["Quantum Flux 9000"][0] is Reason.GPU_UNKNOWN
    assert reasons["M60"] == (Reason.NO_THROUGHPUT, "catalog has no dense bf16 figure for M60")
    fp16 = rank(job(**{**LORA_7B, "precision": "fp16", "params": 1e9}), [t4])
    assert len(fp16.candidates) == 1


def test_constraints_each_exclude_with_their_own_reason() -> None:
    offers = [
        offer("H100-SXM", 1, "4.00", provider="elsewhere"),
        offer("H100-SXM", 1, "4.00", region="eu-west-1"),
        offer("L4", 1, "0.80"),
        offer("H100-SXM", 8, "40.00"),
        offer("H100-SXM", 1, "9.00"),
        offer("H100-SXM", 1, "4.00", instance_type="the-one"),
    ]
    p = job(
        **LORA_7B,
        providers=["testcloud"],
        regions=["us-east-1"],
        gpus=["H100"],
        max_gpus=4,
        max_price_per_hour="5",
    )
    ranking = rank(p, offers, explain=True)
    assert names([c.offer for c in ranking.candidates]) == ["the-one"]
    assert [e.reason for e in ranking.exclusions] == [
        Reason.PROVIDER,
        Reason.REGION,
        Reason.GPU_NOT_ALLOWED,
        Reason.GPU_COUNT,
        Reason.MAX_PRICE,
    ]
    assert ranking.feasible + sum(ranking.excluded_counts.values()) == ranking.considered
    over_budget = rank(job(**LORA_7B, budget_usd="1"), offers[-1:], explain=True)
    assert over_budget.exclusions[0].reason is Reason.BUDGET


def test_candidate_money_is_the_offers_decimal_times_the_estimated_hours() -> None:
    o = offer("H100-SXM", 8, "98.32")
    (c,) = rank(job(**FULL_7B), [o]).candidates
    assert c.price_per_hour_usd is o.price_per_hour_usd
    assert c.price_per_gpu_hour_usd == Decimal("12.29")
    assert c.job_cost_usd == (Decimal("98.32") * Decimal(f"{c.job_hours:.6f}")).quantize(
        Decimal("0.01")
    )


def test_top_n_keeps_the_cheapest_jobs_in_order() -> None:
    offers = [offer("H100-SXM", 1, f"{4 + i / 10:.2f}", instance_type=f"h{i}") for i in range(30)]
    ranking = rank(job(**LORA_7B), offers[::-1], top=5)
    assert names([c.offer for c in ranking.candidates]) == ["h0", "h1", "h2", "h3", "h4"]
    assert [c.rank for c in ranking.candidates] == [1, 2, 3, 4, 5]
    assert ranking.feasible == 30


def test_reference_gpu_hours_reproduce_on_the_reference_gpu_and_scale_elsewhere() -> None:
    p = job(
        params=3e9,
        task="full_finetune",
        precision="bf16",
        reference_gpu_hours=300,
        reference_gpu="A100-80GB",
    )
    a100 = offer("A100-80GB", 1, "4.00", instance_type="a100")
    h100 = offer("H100-SXM", 1, "8.00", instance_type="h100")
    by_name = {c.offer.instance_type: c for c in rank(p, [a100, h100]).candidates}
    assert by_name["a100"].job_hours == pytest.approx(300)
    ratio = float(get_spec("A100-80GB").bf16_tflops or 0) / float(
        get_spec("H100-SXM").bf16_tflops or 1
    )
    assert by_name["h100"].job_hours == pytest.approx(300 * ratio)


# --- absolute estimates, worked by hand (issue 10.15) ------------------------------
# Datasheet figures from tracker/catalog/gpus.toml: A100-80GB (SXM4) dense BF16 312 TFLOPS,
# H100-SXM dense BF16 989.5 TFLOPS, MI300X dense BF16 1,307.4 TFLOPS, L4 dense FP16
# 121 TFLOPS and 300 GB/s. Efficiencies from assumptions.py: LoRA 0.30, full fine-tune
# 0.35, inference 0.30; 0.95 kept per doubling of GPUs over NVLink; memory 0.60.


def test_lora_7b_on_one_a100_80gb_hours_and_cost_from_the_datasheet() -> None:
    # FLOPs = 4 (LoRA: forward + activation gradients) x 7e9 params x 80e6 tokens = 2.24e18
    # rate  = 312e12 FLOP/s x 0.30 = 9.36e13 FLOP/s
    # time  = 2.24e18 / 9.36e13 = 23,931.62 s = 6.647673 h
    # cost  = $1.79/h x 6.647673 h = $11.899335 -> $11.90
    a100 = offer("A100-80GB", 1, "1.79", instance_type="a100")
    (c,) = rank(job(**LORA_7B), [a100]).candidates
    assert c.compute_hours == pytest.approx(6.647673, abs=1e-6)
    assert c.job_hours == pytest.approx(6.647673, abs=1e-6)
    assert c.job_cost_usd == Decimal("11.90")


def test_full_finetune_7b_on_8_h100_over_nvlink_hours_and_cost() -> None:
    # FLOPs = 6 x 7e9 x 1e9 tokens = 4.2e19
    # efficiency = 0.35 x 0.95^log2(8) = 0.35 x 0.857375 = 0.30008125
    # rate  = 8 x 989.5e12 x 0.30008125 = 2.3754432e15 FLOP/s
    # time  = 4.2e19 / 2.3754432e15 = 17,680.91 s = 4.911364 h
    # cost  = $98.32/h x 4.911364 h = $482.885308 -> $482.89
    h100 = offer("H100-SXM", 8, "98.32", interconnect="nvlink")
    (c,) = rank(job(**FULL_7B), [h100]).candidates
    assert c.efficiency == pytest.approx(0.30008125)
    assert c.job_hours == pytest.approx(4.911364, abs=1e-6)
    assert c.job_cost_usd == Decimal("482.89")


def test_memory_bound_inference_on_one_l4_hours_and_cost() -> None:
    # 7B in fp16 streams 14e9 weight bytes per decode step; 1e6 tokens at batch 8 is
    # 125,000 steps. Memory: 125,000 x 14e9 / (300e9 x 0.60) = 9,722.22 s = 2.700617 h.
    # Compute: 2 x 7e9 x 1e6 / (121e12 x 0.30) = 385.67 s, so memory bounds it.
    # cost = $0.8048/h x 2.700617 h = $2.173457 -> $2.17
    l4 = offer("L4", 1, "0.8048")
    p = job(
        params=7e9,
        task="inference",
        precision="fp16",
        tokens=1e6,
        batch_size=8,
        sequence_length=1024,
    )
    (c,) = rank(p, [l4]).candidates
    assert c.job_hours == pytest.approx(2.700617, abs=1e-6)
    assert c.job_cost_usd == Decimal("2.17")


# --- interconnect the offer does not state (issue 10.11) ----------------------------


def test_a_sheet_8_gpu_sxm_box_without_interconnect_is_sharded_over_nvlink() -> None:
    # Price-sheet rows carry interconnect "unknown". An 8 x H100-SXM (p5) or 8 x
    # A100-80GB SXM4 (p4de) box is an HGX board: NVLink, so the 104.3 GiB of weights,
    # gradients and Adam states (16 B x 7e9) shard 8 ways: 13.0 GiB + 1.5 GiB of
    # activations per GPU, well under 80 (unsharded it would need 105.8 GiB on each).
    p5 = offer("H100-SXM", 8, "98.32", interconnect="unknown", instance_type="p5")
    p4de = offer("A100-80GB", 8, "40.97", interconnect="unknown", instance_type="p4de")
    ranking = rank(job(**FULL_7B), [p5, p4de], explain=True)
    by_name = {c.offer.instance_type: c for c in ranking.candidates}
    assert set(by_name) == {"p5", "p4de"}
    assert by_name["p5"].sharded and by_name["p4de"].sharded
    # the NVLink scaling applies too: same hours as the NVLink box worked out above
    assert by_name["p5"].job_hours == pytest.approx(4.911364, abs=1e-6)
    assert by_name["p5"].interconnect.value == "nvlink"
    assert by_name["p5"].interconnect_from_catalog
    assert any("from the GPU catalog for 2 ranked" in note for note in ranking.notes)


def test_nvlink_required_accepts_an_sxm_box_whose_offer_does_not_say() -> None:
    p5 = offer("H100-SXM", 8, "98.32", interconnect="unknown")
    pcie_box = offer("L40S", 8, "30.00", interconnect="unknown")
    ranking = rank(job(**LORA_7B, interconnect="required"), [p5, pcie_box], explain=True)
    assert [c.offer for c in ranking.candidates] == [p5]
    (excluded,) = ranking.exclusions
    assert excluded.reason is Reason.INTERCONNECT
    assert excluded.detail == "8 GPUs over unknown; profile requires NVLink or a GPU fabric"


def test_an_unshardable_multi_gpu_box_says_why_it_cannot_shard() -> None:
    # L40S is a PCIe card: the catalog cannot tell whether a box bridges them, so an
    # unstated interconnect stays unknown and a full replica (105.8 GiB) must fit one GPU.
    unknown = offer("L40S", 8, "30.00", interconnect="unknown", instance_type="unknown")
    pcie = offer("L40S", 8, "30.00", interconnect="pcie", instance_type="pcie")
    ranking = rank(job(**FULL_7B), [unknown, pcie], explain=True)
    assert not ranking.candidates
    detail = {e.offer.instance_type: e.detail for e in ranking.exclusions}
    assert detail["unknown"] == (
        "needs 105.8 GiB on one GPU; cannot shard: interconnect unknown; has 48.0 GiB per GPU"
    )
    assert detail["pcie"] == (
        "needs 105.8 GiB on one GPU; cannot shard: interconnect pcie; has 48.0 GiB per GPU"
    )


def test_a_sharded_box_that_still_does_not_fit_says_per_gpu_after_sharding() -> None:
    # 70B full fine-tune: 16 B x 70e9 = 1,043.1 GiB of state / 8 = 130.4 GiB per GPU + activations
    box = offer("H100-SXM", 8, "98.32", interconnect="nvlink")
    p = job(params=70e9, task="full_finetune", precision="bf16", tokens=1e9)
    (excluded,) = rank(p, [box], explain=True).exclusions
    assert excluded.reason is Reason.VRAM
    assert excluded.detail.startswith("needs 13")
    assert excluded.detail.endswith(" GiB per GPU sharded over 8 GPUs, has 80.0 GiB per GPU")


# --- a vendor-neutral GPU fabric (issue 10.12) -------------------------------------

FULL_13B = dict(params=13e9, task="full_finetune", precision="bf16", tokens=1e9)


def test_gpu_fabric_shards_training_state_like_nvlink() -> None:
    # 13B full fine-tune: 16 B x 13e9 = 193.7 GiB of state > 192 GiB of one MI300X,
    # so it fits only when sharded over the 8 GPUs' Infinity Fabric.
    fabric = offer("MI300X", 8, "48.00", interconnect="gpu_fabric", instance_type="fabric")
    pcie = offer("MI300X", 8, "48.00", interconnect="pcie", instance_type="pcie")
    ranking = rank(job(**FULL_13B), [fabric, pcie], explain=True)
    assert [c.offer.instance_type for c in ranking.candidates] == ["fabric"]
    assert ranking.candidates[0].sharded
    assert ranking.exclusions[0].reason is Reason.VRAM
    required = rank(job(**FULL_13B, interconnect="required"), [fabric])
    assert len(required.candidates) == 1


def test_gpu_fabric_scales_like_nvlink() -> None:
    # 4.2e19 FLOPs / (8 x 1307.4e12 x 0.35 x 0.95^3) = 13,381.72 s = 3.717145 h
    fabric = offer("MI300X", 8, "48.00", interconnect="gpu_fabric")
    (c,) = rank(job(**FULL_7B), [fabric]).candidates
    assert c.job_hours == pytest.approx(3.717145, abs=1e-6)


def test_an_oam_box_without_interconnect_takes_its_vendors_fabric_from_the_catalog() -> None:
    box = offer("MI300X", 8, "48.00", interconnect="unknown")
    (c,) = rank(job(**FULL_13B, interconnect="required"), [box]).candidates
    assert c.sharded
    assert c.interconnect.value == "gpu_fabric" and c.interconnect_from_catalog
    assert c.job_hours == pytest.approx(3.717145 * 13 / 7, abs=1e-5)


# --- no work size (issue 10.13) ----------------------------------------------------


def test_without_a_work_size_offers_that_fit_rank_by_effective_hourly_price() -> None:
    offers = [
        offer("H100-SXM", 8, "98.32", interconnect="nvlink", instance_type="p5"),
        offer("A100-80GB", 8, "40.97", interconnect="nvlink", instance_type="p4de"),
        offer("A100-80GB", 1, "4.10", instance_type="one-a100"),  # 105.8 GiB does not fit
        offer("H200", 8, "84.80", interconnect="nvlink", instance_type="p5e"),
    ]
    p = job(params=7e9, task="full_finetune", precision="bf16")
    ranking = rank(p, offers, explain=True)
    assert not ranking.workload.has_work
    assert [c.offer.instance_type for c in ranking.candidates] == ["p4de", "p5e", "p5"]
    assert all(
        c.job_hours is None and c.compute_hours is None and c.job_cost_usd is None
        for c in ranking.candidates
    )
    assert [e.reason for e in ranking.exclusions] == [Reason.VRAM]
    assert any("ranked by effective $/hour" in note for note in ranking.notes)


# --- reservations need a utilization (issue 10.14) ---------------------------------


def test_a_two_hour_job_does_not_rank_a_one_year_reservation_without_a_utilization() -> None:
    # 7B LoRA on one H100-SXM: 2.24e18 / (989.5e12 x 0.30) = 7,545.90 s = 2.096083 h
    ranking = rank(job(**LORA_7B, horizon_months=36), _reserved_offers(), explain=True)
    assert names([c.offer for c in ranking.candidates]) == ["od"]
    assert ranking.candidates[0].job_hours == pytest.approx(2.096083, abs=1e-6)
    assert {e.reason for e in ranking.exclusions} == {Reason.RESERVED_TERM}
    for e in ranking.exclusions:
        assert "no utilization set" in e.detail


def test_a_reserved_job_pays_its_hours_divided_by_the_utilization() -> None:
    # on demand: $4.00 x 2.096083 h = $8.384332 -> $8.38
    # 1-year:    $2.50 x 2.096083 h / 0.6 = $8.733679 -> $8.73 (dearer than on demand)
    # 3-year:    $1.80 x 2.096083 h / 0.6 = $6.288249 -> $6.29
    p = job(**LORA_7B, horizon_months=36, utilization=0.6)
    ranking = rank(p, _reserved_offers(), explain=True)
    by_name = {c.offer.instance_type: c for c in ranking.candidates}
    assert names([c.offer for c in ranking.candidates]) == ["r3", "od", "r1"]
    assert by_name["od"].job_cost_usd == Decimal("8.38")
    assert by_name["r1"].job_cost_usd == Decimal("8.73")
    assert by_name["r3"].job_cost_usd == Decimal("6.29")
    assert any("÷ utilization 0.6" in note for note in ranking.notes)


def test_reserved_with_a_utilization_but_a_short_horizon_is_still_excluded() -> None:
    p = job(**LORA_7B, horizon_months=6, utilization=0.9)
    ranking = rank(p, _reserved_offers(), explain=True)
    assert names([c.offer for c in ranking.candidates]) == ["od"]
    assert all("horizon is 6 months" in e.detail for e in ranking.exclusions)


# --- rank uses the pricing module's rules (issue 9 item 7) -------------------------


def test_rank_asks_pricing_whether_a_term_is_covered(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.recommend import pricing

    asked: list[tuple[str, float]] = []

    def always(model: Any, months: float) -> bool:
        asked.append((model.value, months))
        return True

    monkeypatch.setattr(pricing, "term_covered", always)
    ranking = rank(job(**LORA_7B, utilization=1), _reserved_offers())
    assert names([c.offer for c in ranking.candidates]) == ["r3", "r1", "od"]
    assert ("reserved_1y", 0) in asked and ("reserved_3y", 0) in asked


def test_rank_takes_the_interruption_rate_from_pricing(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.recommend import pricing

    monkeypatch.setattr(pricing, "interruption_rate_per_hour", lambda pct: pct * 0.0)
    spot = offer("H100-SXM", 1, "3.80", pricing="spot", zone="us-east-1a")
    (c,) = rank(job(**LONG_LORA), [spot]).candidates
    assert c.job_hours == c.compute_hours  # a zero rate means no re-work


# --- availability (issue 13) ---------------------------------------------------------


def test_offers_known_to_be_unavailable_are_skipped_and_counted_unless_included() -> None:
    # the same 1x A100-80GB three times: the cheapest has no capacity now
    sold_out = offer("A100-80GB", 1, "1.00", availability="unavailable")
    low = offer("A100-80GB", 1, "2.00", availability="low")
    unknown = offer("A100-80GB", 1, "3.00")  # a provider that does not say
    offers = [sold_out, low, unknown]
    ranking = rank(job(**LORA_7B), offers)
    assert names([c.offer for c in ranking.candidates]) == names([low, unknown])
    assert ranking.excluded_counts == {"unavailable": 1}
    included = rank(job(**LORA_7B), offers, include_unavailable=True)
    assert names([c.offer for c in included.candidates]) == names([sold_out, low, unknown])
    assert included.excluded_counts == {}
    # a provider the profile does not ask for is out of scope, not "unavailable"
    scoped = rank(job(**LORA_7B, providers=["elsewhere"]), offers)
    assert scoped.excluded_counts == {"provider": 3}
    explained = rank(job(**LORA_7B), offers, explain=True)
    [why] = explained.exclusions
    assert why.reason is Reason.UNAVAILABLE and "no capacity" in why.detail
