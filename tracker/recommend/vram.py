"""How much GPU memory a job needs, from its parameter count, task and precision.

The estimate is split into what ZeRO-3/FSDP (training) or tensor parallelism
(inference) can divide across GPUs and what every GPU needs for itself
(activations of its own micro-batch), because whether a model "fits" an 8-GPU
offer depends on whether the offer's interconnect lets the state be sharded.
All constants live in :class:`~tracker.recommend.assumptions.Assumptions` with
their sources.

A transformer's shape is not in a profile, so it is inferred from the parameter
count (N ≈ 12·L·d², LLaMA-like aspect ratio); that shape only sizes the KV cache,
activations and LoRA adapters, which are small next to the weights except for
long sequences and large batches.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.cnn_memory import cnn_activation_bytes
from tracker.recommend.profiles import Precision, Profile, Task

__all__ = [
    "GIB",
    "ModelShape",
    "VramEstimate",
    "estimate_vram",
    "lora_adapter_params",
    "model_shape",
    "weight_bytes",
]

GIB = float(1 << 30)


def weight_bytes(precision: Precision, a: Assumptions) -> float:
    """Bytes of one stored weight."""
    if precision is Precision.FP32:
        return 4.0
    if precision in (Precision.BF16, Precision.FP16):
        return 2.0
    if precision is Precision.FP8:
        return 1.0
    if precision is Precision.INT8:
        return a.int8_bits_per_param / 8
    return a.int4_bits_per_param / 8


@dataclass(frozen=True, slots=True)
class ModelShape:
    d_model: float
    layers: float
    heads: float


def model_shape(params: float, a: Assumptions) -> ModelShape:
    """d_model and layer count consistent with N = 12·L·d² and L = k·d/head_dim.

    Source for 12·L·d²: Kaplan et al. 2020, Table 1 (N ≈ 12·n_layer·d_model²).
    """
    k = a.layers_per_head_dim
    d = (params * a.head_dim / (12.0 * k)) ** (1.0 / 3.0)
    layers = params / (12.0 * d * d)
    return ModelShape(d_model=d, layers=layers, heads=d / a.head_dim)


def lora_adapter_params(params: float, a: Assumptions) -> float:
    """Trainable parameters of a LoRA adapter set: rank r on q,k,v,o (d×d each: r·2d) and
    gate/up/down (d×8d/3: r·11d/3 each), so r·19·d per layer. They are also all a LoRA
    step's gradients: what crosses the network between data-parallel replicas."""
    shape = model_shape(params, a)
    return shape.layers * a.lora_rank * 19.0 * shape.d_model


def kv_bytes_per_token(
    params: float, precision: Precision, kv_heads: int | None, a: Assumptions
) -> float:
    """K and V of every layer for one token; grouped-query attention keeps ``kv_heads``
    of the model's heads (Ainslie et al., "GQA", arXiv:2305.13245)."""
    shape = model_shape(params, a)
    width = shape.d_model if kv_heads is None else min(shape.heads, kv_heads) * a.head_dim
    kv_bytes = {Precision.FP32: 4.0, Precision.FP8: 1.0}.get(precision, 2.0)
    return 2.0 * shape.layers * width * kv_bytes


@dataclass(frozen=True, slots=True)
class VramEstimate:
    """Bytes needed, by component. ``shardable`` components divide across GPUs."""

    task: Task
    precision: Precision
    weights: float
    gradients: float
    optimizer: float
    adapters: float
    activations: float
    kv_cache: float
    overhead: float

    @property
    def shardable(self) -> float:
        """What ZeRO-3/FSDP (training) or tensor parallelism (inference) divides."""
        if self.task is Task.INFERENCE:
            return self.weights + self.kv_cache + self.overhead + self.activations
        return self.weights + self.gradients + self.optimizer + self.adapters

    @property
    def per_gpu_fixed(self) -> float:
        """What each GPU needs regardless of sharding (its micro-batch's activations)."""
        if self.task is Task.INFERENCE:
            return 0.0
        return self.activations + self.overhead

    @property
    def total(self) -> float:
        return self.shardable + self.per_gpu_fixed

    def per_gpu(self, gpus: int, sharded: bool) -> float:
        """Bytes each of ``gpus`` GPUs needs; unsharded training replicates everything."""
        if gpus <= 1 or not sharded:
            return self.total
        return self.shardable / gpus + self.per_gpu_fixed

    def rows(self) -> list[tuple[str, float]]:
        """(component, GiB) for display; zero components are omitted."""
        parts = [
            ("weights", self.weights),
            ("gradients", self.gradients),
            ("optimizer states", self.optimizer),
            ("LoRA adapters (+grads, Adam)", self.adapters),
            ("activations", self.activations),
            ("KV cache", self.kv_cache),
            ("runtime overhead", self.overhead),
        ]
        return [(name, value / GIB) for name, value in parts if value > 0]


def _transformer_activations(p: Profile, shape: ModelShape, a: Assumptions) -> float:
    """Korthikanti et al. 2022: s·b·h·(34 + 5·a·s/h) bytes per layer at 16 bits."""
    s, b, h = float(p.seq_len), float(p.batch), shape.d_model
    full_layer = s * b * h * (34.0 + 5.0 * shape.heads * s / h)
    if a.activation_checkpointing:
        total = shape.layers * 2.0 * s * b * h + full_layer
    else:
        total = shape.layers * full_layer
    return total * (2.0 if p.compute is Precision.FP32 else 1.0)


def estimate_vram(p: Profile, a: Assumptions) -> VramEstimate:
    n = p.params
    zero = 0.0
    if p.task is Task.INFERENCE:
        weights = n * weight_bytes(p.precision, a)
        kv = kv_bytes_per_token(n, p.precision, p.kv_heads, a) * p.seq_len * p.batch
        return VramEstimate(
            p.task,
            p.precision,
            weights,
            zero,
            zero,
            zero,
            zero,
            kv,
            weights * a.inference_overhead_fraction,
        )
    if p.task in (Task.LORA, Task.QLORA):
        shape = model_shape(n, a)
        adapter_params = lora_adapter_params(n, a)
        return VramEstimate(
            p.task,
            p.precision,
            n * weight_bytes(p.precision, a),
            zero,
            zero,
            adapter_params * a.lora_state_bytes_per_param,
            _transformer_activations(p, shape, a),
            zero,
            zero,
        )
    # full training (transformer or CNN): weights, gradients, Adam states
    if p.precision is Precision.FP32:
        w, g = 4.0, 4.0
        opt = a.adam_fp32_bytes_per_param - w - g
    else:
        w, g = 2.0, 2.0
        opt = a.adam_mixed_precision_bytes_per_param - w - g
    if p.task is Task.CNN_TRAINING:
        activations = cnn_activation_bytes(p, a)  # measured per architecture, not the formula
    else:
        activations = _transformer_activations(p, model_shape(n, a), a)
    return VramEstimate(
        p.task, p.precision, n * w, n * g, n * max(opt, 0.0), zero, activations, zero, zero
    )
