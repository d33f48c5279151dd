"""The vocabulary of a workload profile: tasks, precisions, workload classes, interconnect needs.

Kept apart from :mod:`tracker.recommend.profiles` (validation and files) so the
measurement table and the calibration can use the same names without loading profiles.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

__all__ = [
    "ALLOWED_PRECISIONS",
    "COMPUTE_PRECISIONS",
    "DEFAULT_MAX_NODES",
    "FabricNeed",
    "InterconnectNeed",
    "Precision",
    "Task",
    "WorkloadClass",
    "catalog_gpu_name",
    "parse_hours",
    "parse_nodes",
]

DEFAULT_MAX_NODES = 64
"""Largest cluster ``nodes = "auto"`` sizes (AWS Capacity Blocks sell 1-64 instances)."""
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([hdw]?)\s*$")
_HOURS_PER = {"": 1.0, "h": 1.0, "d": 24.0, "w": 168.0}


def parse_nodes(value: Any) -> Any:
    """A profile's ``nodes``: a whole number 1-1024 or "auto" (None stays None)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return None if value is None else "auto"
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
        raise ValueError(f'must be a whole number 1-1024 or "auto", got {value!r}')
    return value


def parse_hours(value: Any) -> Any:
    """A duration as hours: "10d", "36h", "2w" or a number of hours."""
    if not isinstance(value, str):
        return value
    match = _DURATION.match(value.lower())
    if match is None:
        raise ValueError(f"{value!r} is not a duration like 10d, 36h, 2w or a number of hours")
    return float(match.group(1)) * _HOURS_PER[match.group(2)]


class Task(StrEnum):
    INFERENCE = "inference"
    LORA = "lora"
    QLORA = "qlora"
    FULL_FINETUNE = "full_finetune"
    PRETRAIN = "pretrain"
    CNN_TRAINING = "cnn_training"

    @property
    def is_training(self) -> bool:
        return self is not Task.INFERENCE

    @property
    def is_transformer(self) -> bool:
        return self is not Task.CNN_TRAINING


class WorkloadClass(StrEnum):
    """Groups of jobs whose achieved FLOP/s on one GPU is comparable across sizes."""

    CNN_TRAINING = "cnn_training"
    TRANSFORMER_FINETUNE = "transformer_finetune"
    """Encoder-size transformers (under 1 B parameters), e.g. BERT fine-tuning."""
    LLM_TRAINING = "llm_training"
    """Decoder LLMs of 1 B parameters and more: pre-training, full fine-tuning, LoRA."""
    LLM_INFERENCE = "llm_inference"
    DIFFUSION = "diffusion"


class Precision(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


class FabricNeed(StrEnum):
    """Which inter-node network a job may be sized across (one node is never affected).

    ``required``: only offers with an RDMA fabric (InfiniBand, EFA, RoCE, GPUDirect-TCPX,
    TPU ICI) are ranked. ``preferred``: any offer ranks, but a job spans nodes only over
    a fabric the provider states (a plain Ethernet one included, at its bandwidth).
    ``any``: also over an ``unknown`` fabric, at the assumed fallback bandwidth.
    """

    REQUIRED = "required"
    PREFERRED = "preferred"
    ANY = "any"


class InterconnectNeed(StrEnum):
    """How a multi-GPU offer's interconnect is treated (single GPUs are unaffected).

    ``required``: multi-GPU offers without NVLink are excluded.
    ``preferred``: they are kept, with the PCIe efficiency loss, but training state is
    not sharded over PCIe (each GPU holds a full replica, plain data parallelism).
    ``any``: as preferred, and ZeRO-3/FSDP sharding over PCIe is allowed (slower still).
    """

    REQUIRED = "required"
    PREFERRED = "preferred"
    ANY = "any"


# Which stored-weight precisions make sense for each task. Full training keeps fp32
# master weights whatever the compute precision; quantised (int8/int4) bases are
# only trained through adapters.
ALLOWED_PRECISIONS: Mapping[Task, tuple[Precision, ...]] = {
    Task.INFERENCE: tuple(Precision),
    Task.LORA: (Precision.FP32, Precision.BF16, Precision.FP16, Precision.FP8, Precision.INT8),
    Task.QLORA: (Precision.INT4,),
    Task.FULL_FINETUNE: (Precision.FP32, Precision.BF16, Precision.FP16, Precision.FP8),
    Task.PRETRAIN: (Precision.FP32, Precision.BF16, Precision.FP16, Precision.FP8),
    Task.CNN_TRAINING: (Precision.FP32, Precision.BF16, Precision.FP16),
}
# int4 has no tensor-core rate in any datasheet; weight-only quantised kernels
# dequantise to fp16 (inference) and QLoRA computes in bf16 (QLoRA paper §3).
COMPUTE_PRECISIONS = (Precision.FP32, Precision.BF16, Precision.FP16, Precision.FP8, Precision.INT8)


def catalog_gpu_name(raw: str) -> str | None:
    """The canonical catalog name for a spelling (canonical or alias), None when unknown."""
    from tracker.catalog import get_spec, resolve_gpu  # the catalog loads its TOML on use

    try:
        return get_spec(raw).name
    except KeyError:
        pass
    match = resolve_gpu(raw)
    return match.name if match.known else None
