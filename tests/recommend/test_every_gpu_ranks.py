"""Every GPU the collectors see in the shipped fixtures ranks, with its basis (issue 28).

The GPUs are what each collector's own parser makes of its recorded payloads
(tests/recommend/fixture_gpus.py). Each is offered as 1, 2, 4 and 8 GPUs, equally priced,
to every built-in profile: it must rank for at least one, or else be left out of every
one for a reason that is not "no throughput" (memory, GPU count, ...).
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import make_offer
from tests.recommend.fixture_gpus import fixture_gpus
from tests.recommend.test_calibration import offer
from tracker.catalog import resolve_gpu
from tracker.models import Offer
from tracker.recommend import Reason, load_profiles, rank

# Sold in the fixtures, and no throughput figure exists to rate them with: named here so
# the list shrinks (this test fails) as soon as one gains a figure or a measurement.
UNRATED = {
    # AWS g4ad; AMD publishes no datasheet for this cloud-only part (catalog note), and
    # nothing measured it
    "Radeon-Pro-V520": "no vendor throughput figure and no measurement",
    # Huawei's Ascend 310 inference NPU flavors: not in the GPU catalog (kept, flagged)
    "HUAWEI Ascend 310": "not in the catalog",
}

SEEN = fixture_gpus()


def test_the_fixtures_sell_the_gpus_the_issue_names() -> None:
    # AWS g5 (A10G) and g5g (T4G) from the DescribeInstanceTypes captures; OCI's MI300X and
    # B200 shapes; GCP's P100 and P4; Vast.ai's RTX 4090 offer.
    assert {"A10G", "T4G", "MI300X", "B200", "P100", "P4", "RTX-4090"} <= set(SEEN)
    assert "aws" in SEEN["A10G"] and "oci" in SEEN["MI300X"]
    assert len(SEEN) >= 20


def _offers(gpu: str) -> list[Offer]:
    if resolve_gpu(gpu).known:
        return [offer(gpu, n) for n in (1, 2, 4, 8)]
    # kept with its raw name and flagged, as the collector stores it
    return [
        make_offer(
            instance_type=f"x.{n}",
            gpu_model=gpu,
            gpu_raw_name=gpu,
            gpu_known=False,
            gpu_count=Decimal(n),
            price_per_hour=Decimal(2 * n),
        )
        for n in (1, 2, 4, 8)
    ]


def _outcome(gpu: str) -> tuple[dict[str, str], set[str]]:
    """profile -> the first candidate's basis label, and every exclusion reason seen."""
    ranked: dict[str, str] = {}
    reasons: set[str] = set()
    profiles = load_profiles()
    for name in profiles.profiles:
        ranking = rank(profiles.get(name), _offers(gpu), explain=True)
        if ranking.candidates:
            ranked[name] = ranking.candidates[0].rate.label
        reasons |= {e.reason.label for e in ranking.exclusions}
    return ranked, reasons


@pytest.mark.parametrize("gpu", sorted(g for g in SEEN if g not in UNRATED))
def test_every_gpu_on_sale_ranks_for_a_built_in_profile(gpu: str) -> None:
    assert resolve_gpu(gpu).known
    ranked, reasons = _outcome(gpu)
    print(f"{gpu} ({', '.join(sorted(SEEN[gpu]))}): {ranked}")
    assert ranked, f"{gpu} ranks for no built-in profile (left out for {sorted(reasons)})"
    assert set(ranked.values()) <= {"measured", "scaled", "modelled"}


@pytest.mark.parametrize("gpu", sorted(UNRATED))
def test_the_gpus_nothing_rates_are_the_named_ones(gpu: str) -> None:
    assert gpu in SEEN
    ranked, reasons = _outcome(gpu)
    assert not ranked
    expected = Reason.GPU_UNKNOWN if not resolve_gpu(gpu).known else Reason.NO_THROUGHPUT
    assert expected.label in reasons


# Beyond the fixtures: catalog rows with no figure any rule can use (each row's note says
# why: NVIDIA published no M60/H20/L20 throughput, the RTX 5090's and the RTX 4000 Ada's
# tensor rates could not be confirmed from a vendor source, AMD publishes no V520 datasheet).
CATALOG_UNRATED = {"M60", "RTX-5090", "RTX-4000-Ada", "H20", "L20", "Radeon-Pro-V520"}


def test_every_catalog_gpu_but_the_named_ones_ranks_for_a_built_in_profile() -> None:
    from tracker.catalog import all_specs

    unrated = {s.name for s in all_specs() if not _outcome(s.name)[0]}
    assert unrated == CATALOG_UNRATED


@pytest.mark.parametrize(("gpu", "like"), [("A800-80GB", "A100-80GB"), ("H800", "H100-SXM")])
def test_the_china_market_parts_train_as_the_die_they_share(gpu: str, like: str) -> None:
    # A800 / H800: the A100's / H100's die with NVLink capped at 400 GB/s (catalog notes)
    p = load_profiles().get("llm-13b-pretrain")
    ranking = rank(p, [offer(gpu, 8), offer(like, 8)])
    hours = {c.offer.gpu_model: c for c in ranking.candidates}
    assert hours[gpu].job_hours == pytest.approx(hours[like].job_hours)
    assert hours[gpu].rate.source.startswith(f"{gpu.split('-')[0]} modelled as the ")
