"""A GPU the vendor publishes no throughput for is rated as the part it is built from.

The A10G exists only in AWS g5 instances; NVIDIA publishes no datasheet for it and AWS
publishes its memory (24 GB per GPU) but no clocks or TFLOPS. Leaving it out would drop
the most rented GPU on the most used cloud from every training ranking, and inventing a
peak would break the catalog's rule that every figure is a vendor's. So the recommender
rates it by a stated rule instead: it is the GA102 die of NVIDIA's A10, taken at the
A10's published clocks and memory bandwidth, so it runs a job as the A10 does (the A10's
own measurements where they exist, else the A10's datasheet path). The rate's basis is
``modelled`` and its source names the rule, so ``--explain`` says how it was costed.

The T4G of AWS g5g instances is rated the same way, as the T4, and the China-market A800
and H800 (the A100's and H100's dies with NVLink capped at 400 GB/s) as the A100 80GB and
H100 SXM. Pascal and Kepler GPUs (P100, P40, P4, K80) have no tensor cores, so the
catalog, which lists matrix-unit rates only, has no 16-bit figure for them; their
datasheets print the CUDA-core rates they run at instead (P100: 18.7 TFLOPS half
precision; P40, P4, K80: single precision only), and those rate them, × the task's MFU,
basis ``modelled``.

The RTX 6000 Ada's datasheet prints one tensor figure, FP8 (1,457 TFLOPS with sparsity);
Ada's tensor cores run FP8 at twice their FP16/BF16 rate (the Ada whitepaper's RTX 4090
columns in the catalog: 330.3 against 165.2), so its 16-bit rate is taken as its FP8 rate
× that ratio, and the GPU is then rated as any other (scaled from its nearest measured
neighbour), basis ``modelled``.

A GPU's own measurements always come first (the A10G's published serving runs, a user's
``[[measured]]`` rows): the rules apply only where nothing else rates the GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from tracker.catalog import GpuSpec, get_spec
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.measured import Measurement
from tracker.recommend.profiles import Precision, Profile
from tracker.recommend.rating import Basis, Rate

__all__ = [
    "DERIVED",
    "STAND_INS",
    "VECTOR_RULES",
    "Derived16Bit",
    "StandIn",
    "VectorRule",
    "stand_in_rate",
]


@dataclass(frozen=True, slots=True)
class StandIn:
    gpu: str
    """The catalog name without vendor throughput figures."""
    like: str
    """The catalog part whose figures and measurements rate it."""
    rule: str
    """The rule as ``--explain`` prints it."""
    source: str


STAND_INS: dict[str, StandIn] = {
    s.gpu: s
    for s in (
        StandIn(
            gpu="A10G",
            like="A10",
            rule=(
                "A10G modelled as the A10 (the same GA102 die at the A10's published "
                "clocks and 600 GB/s; AWS's g5 page publishes 24 GB per GPU and no TFLOPS)"
            ),
            source="https://aws.amazon.com/ec2/instance-types/g5/",
        ),
        StandIn(
            gpu="T4G",
            like="T4",
            rule=(
                "T4G modelled as the T4 (NVIDIA's T4 on AWS's Graviton hosts; AWS's g5g page "
                "publishes 16 GB per GPU and no TFLOPS)"
            ),
            source="https://aws.amazon.com/ec2/instance-types/g5g/",
        ),
        StandIn(
            gpu="A800-80GB",
            like="A100-80GB",
            rule=(
                "A800 modelled as the A100 80GB (the same GA100 die, NVLink limited to "
                "400 GB/s; NVIDIA's A800 datasheet is gone)"
            ),
            source="https://www.ctyun.cn/developer/article/437601152262213",
        ),
        StandIn(
            gpu="H800",
            like="H100-SXM",
            rule=(
                "H800 modelled as the H100 SXM (the same GH100 die, NVLink limited to "
                "400 GB/s; NVIDIA published no H800 datasheet)"
            ),
            source=(
                "https://www.philisun.com/technical-analysis/"
                "nvidia-h800-vs-h100-a-technical-deep-dive-into-politically-defined-ai-chips/"
            ),
        ),
    )
}


@dataclass(frozen=True, slots=True)
class VectorRule:
    """A GPU without matrix units, rated at the CUDA-core rate its datasheet prints."""

    gpu: str
    tflops: float
    precision: Precision
    rule: str


VECTOR_RULES: dict[str, VectorRule] = {
    r.gpu: r
    for r in (
        VectorRule(
            "P100",
            18.7,
            Precision.FP16,
            "P100 has no tensor cores: 16-bit work runs on its CUDA cores at the datasheet's "
            "18.7 TFLOPS half precision",
        ),
        VectorRule(
            "P40",
            12.0,
            Precision.FP32,
            "P40 has no tensor cores and its datasheet prints no FP16 rate: the job is costed "
            "in fp32 at the datasheet's 12 TFLOPS",
        ),
        VectorRule(
            "K80",
            4.365,
            Precision.FP32,
            "K80 has no tensor cores and no fast FP16: the job is costed in fp32 at the "
            "datasheet's 8.73 TFLOPS per board, 4.365 per GPU die",
        ),
        VectorRule(
            "P4",
            5.5,
            Precision.FP32,
            "P4 has no tensor cores and its datasheet prints no FP16 rate: the job is costed "
            "in fp32 at the datasheet's 5.5 TFLOPS",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Derived16Bit:
    """A GPU whose datasheet prints only FP8: 16-bit at its architecture's FP8:16-bit ratio."""

    gpu: str
    ratio_from: str
    """A catalog GPU of the same architecture printing both rates."""


DERIVED: dict[str, Derived16Bit] = {"RTX-6000-Ada": Derived16Bit("RTX-6000-Ada", "RTX-4090")}


Predict = Callable[[Profile, GpuSpec, Assumptions, tuple[Measurement, ...]], Rate | None]


def stand_in_rate(
    p: Profile,
    spec: GpuSpec,
    a: Assumptions,
    measurements: tuple[Measurement, ...],
    predict: Predict,
) -> Rate | None:
    """``spec``'s rate by its stand-in rule; None when it has no rule (or no rate)."""
    vector = VECTOR_RULES.get(spec.name)
    if vector is not None:
        return _vector_rate(p, spec, a, vector)
    derived = DERIVED.get(spec.name)
    if derived is not None:
        return _derived_rate(p, spec, a, measurements, predict, derived)
    rule = STAND_INS.get(spec.name)
    if rule is None:
        return None
    inner = predict(p, get_spec(rule.like), a, measurements)
    if inner is None:
        return None
    source = f"{rule.rule}; as the {rule.like}: {inner.label}, {inner.source}"
    fallback = inner.fallback.replace(f": {rule.like} has", f": {rule.gpu} (as {rule.like}) has")
    return _modelled(inner, source, fallback)


def _vector_rate(p: Profile, spec: GpuSpec, a: Assumptions, rule: VectorRule) -> Rate:
    eff = a.efficiency_for(p.task.value)
    fallback = ""
    if p.compute is not rule.precision:
        want, runs = p.compute.value, rule.precision.value
        fallback = f"{want} runs as {runs}: {spec.name} has no {want} rate"
    source = f"{rule.rule}; x {p.task.value} MFU {eff:g}"
    return Rate(rule.tflops * 1e12 * eff, Basis.MODELLED, source, rule.precision, fallback)


def _derived_rate(
    p: Profile,
    spec: GpuSpec,
    a: Assumptions,
    measurements: tuple[Measurement, ...],
    predict: Predict,
    rule: Derived16Bit,
) -> Rate | None:
    ref = get_spec(rule.ratio_from)
    if spec.fp8_tflops is None or ref.fp8_tflops is None or ref.bf16_tflops is None:
        return None
    sixteen = (spec.fp8_tflops * ref.bf16_tflops / ref.fp8_tflops).quantize(Decimal("0.1"))
    inner = predict(p, replace(spec, fp16_tflops=sixteen, bf16_tflops=sixteen), a, measurements)
    if inner is None:
        return None
    text = (
        f"{spec.name} 16-bit taken as {sixteen} TFLOPS: its datasheet's FP8 "
        f"{spec.fp8_tflops} x the {spec.architecture} ratio of {ref.name} "
        f"({ref.bf16_tflops}/{ref.fp8_tflops})"
    )
    return _modelled(inner, f"{text}; then {inner.label}, {inner.source}", inner.fallback)


def _modelled(inner: Rate, source: str, fallback: str) -> Rate:
    """``inner``'s rate, flagged modelled (a rule, not this GPU's data) with the rule first."""
    return Rate(
        inner.flops,
        Basis.MODELLED,
        source,
        inner.precision,
        fallback,
        False,
        memory_scale=inner.memory_scale,
    )
