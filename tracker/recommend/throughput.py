"""How long a job runs on a given number of GPUs: FLOPs over achieved FLOPS.

``hours = job FLOPs / (GPUs × dense TFLOPS at the compute precision × efficiency)``
with efficiency = task MFU × scaling per doubling of GPUs (by interconnect). Decoding
(inference) is usually limited by memory bandwidth rather than FLOPS, so inference
takes the larger of that compute time and the time to stream the weights once per
decode step (a roofline). Constants: :mod:`tracker.recommend.assumptions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tracker.catalog import GpuSpec
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.profiles import Precision, Profile, Task
from tracker.recommend.vram import VramEstimate, estimate_vram, weight_bytes

__all__ = ["Workload", "scaling_factor", "spec_tflops", "workload"]


def spec_tflops(spec: GpuSpec, precision: Precision) -> float | None:
    """Dense datasheet rate at ``precision``; None when the catalog has no figure."""
    value = {
        Precision.FP32: spec.fp32_tflops,
        Precision.BF16: spec.bf16_tflops,
        Precision.FP16: spec.fp16_tflops,
        Precision.FP8: spec.fp8_tflops,
        Precision.INT8: spec.int8_tops,
    }.get(precision)
    return None if value is None else float(value)


def scaling_factor(gpus: float, interconnect: str, a: Assumptions) -> float:
    """Efficiency kept by ``gpus`` GPUs relative to one (fractional GPUs keep all of it)."""
    if gpus <= 1:
        return 1.0
    per_doubling = a.multi_gpu_scaling.get(interconnect, a.multi_gpu_scaling["unknown"])
    return float(per_doubling ** math.log2(gpus))


@dataclass(frozen=True, slots=True)
class Workload:
    """A profile reduced to the numbers the ranker needs, computed once per profile."""

    profile: Profile
    flops: float | None
    """Total model FLOPs of the job; None when the profile gives no work size."""
    efficiency: float
    """Single-GPU MFU for the task."""
    decode_steps: float
    """Inference only: sequential decode steps (tokens / batch); 0 for training."""
    weight_bytes: float
    """Bytes streamed per decode step (the weights)."""
    vram: VramEstimate

    @property
    def has_work(self) -> bool:
        return self.flops is not None

    def hours(
        self,
        gpus: float,
        tflops_per_gpu: float,
        bandwidth_gbs_per_gpu: float | None,
        scaling: float,
        a: Assumptions,
    ) -> float:
        """Estimated hours on ``gpus`` GPUs (scalar version of the ranker's arithmetic)."""
        if self.flops is None:
            raise WorkloadError(f"profile {self.profile.name!r} gives no work size")
        seconds = self.flops / (gpus * tflops_per_gpu * 1e12 * self.efficiency * scaling)
        if self.decode_steps and bandwidth_gbs_per_gpu:
            memory = (
                self.decode_steps
                * self.weight_bytes
                / (gpus * bandwidth_gbs_per_gpu * 1e9 * a.memory_bandwidth_efficiency)
            )
            seconds = max(seconds, memory)
        return seconds / 3600.0


class WorkloadError(ValueError):
    """The profile's work cannot be expressed in FLOPs (e.g. reference GPU lacks a figure)."""


def workload(p: Profile, a: Assumptions) -> Workload:
    eff = a.efficiency_for(p.task.value)
    wbytes = p.params * weight_bytes(p.precision, a)
    steps = 0.0
    flops: float | None
    if not p.has_work_size:
        flops = None
    elif p.reference_gpu_hours is not None and p.reference_gpu is not None:
        from tracker.catalog import get_spec

        spec = get_spec(p.reference_gpu)
        rate = spec_tflops(spec, p.compute)
        if rate is None:
            raise WorkloadError(
                f"profile {p.name!r}: reference_gpu: {spec.name} has no "
                f"{p.compute.value} figure in the catalog"
            )
        flops = p.reference_gpu_hours * 3600.0 * rate * 1e12 * eff
    elif p.task is Task.CNN_TRAINING:
        assert p.images is not None and p.epochs is not None
        per_image = p.flops_per_image or a.resnet50_flops_per_param_image * p.params
        flops = a.cnn_training_passes * per_image * p.images * p.epochs
    else:
        assert p.tokens is not None
        if p.task is Task.INFERENCE and p.serving:
            # prefill + decode FLOPs of tokens / output_tokens requests (the hours come
            # from the serving model, tracker.recommend.inference)
            assert p.input_tokens is not None and p.output_tokens is not None
            per_token = a.inference_flops_per_param_token * (1 + p.input_tokens / p.output_tokens)
        elif p.task is Task.INFERENCE:
            per_token = a.inference_flops_per_param_token
            steps = p.tokens / p.batch
        elif p.task in (Task.LORA, Task.QLORA):
            per_token = a.adapter_flops_per_param_token
        else:
            per_token = a.training_flops_per_param_token
        flops = per_token * p.params * p.tokens
    return Workload(p, flops, eff, steps, wbytes, estimate_vram(p, a))
