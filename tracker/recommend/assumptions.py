"""Every number the recommender assumes, in one place, each with where it comes from.

Estimates are only as good as these constants, so they are data rather than
literals scattered through the code: a user who measured their own model FLOPs
utilisation (MFU) or knows their provider's interruption rate overrides the
figure in the ``[assumptions]`` table of their profiles file (same field names),
and ``gpu-tracker estimate`` / ``recommend`` use it everywhere at once.

Figures marked *source* are taken from the cited publication; figures marked
*assumption* are engineering judgement, stated so they can be argued with.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["HOURS_PER_MONTH", "Assumptions"]

_EFFICIENCY = {
    "pretrain": 0.40,
    "full_finetune": 0.35,
    "lora": 0.30,
    "qlora": 0.20,
    "inference": 0.30,
    "cnn_training": 0.35,
}
_SCALING = {"nvlink": 0.95, "gpu_fabric": 0.95, "pcie": 0.80, "unknown": 0.80}

HOURS_PER_MONTH = 730.0
"""8760 h / 12: the month AWS, Azure and GCP bill reservations and quote rates against."""


class Assumptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # ---- memory (bytes per parameter) -------------------------------------------------
    adam_mixed_precision_bytes_per_param: float = Field(default=16.0, gt=0)
    """Weights + gradients + Adam states for mixed-precision training: 2 (fp16/bf16
    weights) + 2 (gradients) + 12 (fp32 master weights, momentum, variance).
    Source: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", SC'20 (arXiv:1910.02054), §3.1 ("2Ψ + 2Ψ + KΨ, K = 12")."""

    adam_fp32_bytes_per_param: float = Field(default=16.0, gt=0)
    """Pure fp32 training with Adam: 4 (weights) + 4 (gradients) + 8 (two moments).
    Source: same ZeRO §3.1 accounting, without the fp16 copies."""

    int4_bits_per_param: float = Field(default=4.127, gt=0)
    """NF4 storage with double quantisation: 4 bits + 0.127 bits of quantisation
    constants per parameter. Source: Dettmers et al., "QLoRA: Efficient Finetuning of
    Quantized LLMs" (arXiv:2305.14314), §3 "Double Quantization"."""

    int8_bits_per_param: float = Field(default=8.0, gt=0)
    """LLM.int8()/per-channel int8 weights (scales are negligible at this width)."""

    inference_overhead_fraction: float = Field(default=0.20, ge=0)
    """Runtime buffers, CUDA context and allocator slack on top of the weights when
    serving. Source: EleutherAI, "Transformer Math 101" (blog.eleuther.ai/transformer-math,
    2023): "total inference memory ≈ 1.2 × model memory"."""

    lora_rank: int = Field(default=64, ge=1)
    """Adapter rank on every linear layer. Source: QLoRA paper §4 (r = 64 on all
    linear layers is their default setup)."""

    lora_state_bytes_per_param: float = Field(default=16.0, gt=0)
    """Adapter weights, gradients and Adam states trained in mixed precision (ZeRO §3.1)."""

    head_dim: int = Field(default=128, ge=1)
    """Width of one attention head; with it the model's shape follows from its
    parameter count (d_model = heads × 128, layers ≈ d_model / 128, as in LLaMA-7B
    32×4096, LLaMA-13B 40×5120). Source: Touvron et al., "LLaMA" (arXiv:2302.13971),
    Table 2. Used only for KV-cache, activation and adapter sizes."""

    layers_per_head_dim: float = Field(default=1.0, gt=0)
    """Layers = layers_per_head_dim × d_model / head_dim (LLaMA-7B: 32 = 4096/128)."""

    activation_checkpointing: bool = True
    """Transformer training keeps only each layer's input (2·s·b·h bytes per layer) plus
    one layer's full activations, i.e. full recomputation as fine-tuning scripts enable
    by default for large models. Source: Korthikanti et al., "Reducing Activation
    Recomputation in Large Transformer Models" (arXiv:2205.05198), §4 eq. (1)
    s·b·h·(34 + 5·a·s/h) bytes per layer without recomputation, and §5 2·s·b·h with it."""

    resnet50_flops_per_param_image: float = Field(default=7736.0e6 / 25.0e6, gt=0)
    """Default forward FLOPs per parameter per image for a CNN profile that gives no
    ``flops_per_image``: ResNet-50's 3,868 M MACs (7,736 MFLOPs) at 224×224 over its
    25 M parameters. Source: ThanatosShinji/onnx-tool README, model-zoo table
    (commit 00f5f0a0), agreeing with He et al. 2016 Table 1 (3.8 × 10⁹ multiply-adds)."""

    resnet50_activation_bytes_per_param_image: float = Field(default=2 * 50.973e6 / 25.56e6, gt=0)
    """Default fp32 activation bytes per parameter per image for a CNN profile with
    neither ``activation_bytes_per_image`` nor ``cnn_architecture``: ResNet-50's measured
    50.97 MB per 224×224 image in fp16 (x 2 in fp32) over its 25.56 M parameters; see
    :mod:`tracker.recommend.cnn_memory` for the measurement (mmclassification's fp16
    ResNet-50 run, 1.9 GB peak at 32 images per GPU)."""

    cnn_training_passes: float = Field(default=3.0, gt=0)
    """Training FLOPs per image = 3 × forward (backward costs twice the forward).
    Source: Kaplan et al., "Scaling Laws for Neural Language Models" (arXiv:2001.08361),
    §2.1; the same forward/backward split holds for convolutions."""

    # ---- compute ----------------------------------------------------------------------
    training_flops_per_param_token: float = Field(default=6.0, gt=0)
    """Source: Kaplan et al. 2020 §2.1: C ≈ 6·N per training token (2N forward, 4N backward)."""

    adapter_flops_per_param_token: float = Field(default=4.0, gt=0)
    """LoRA/QLoRA skip weight gradients of the frozen base: forward 2N plus the
    activation-gradient half of the backward 2N. Derived from the Kaplan §2.1 split."""

    inference_flops_per_param_token: float = Field(default=2.0, gt=0)
    """Source: Kaplan et al. 2020 §2.1: 2·N FLOPs per token in the forward pass."""

    efficiency: dict[str, float] = Field(default_factory=lambda: dict(_EFFICIENCY))
    """Model FLOPs utilisation on one GPU: achieved / datasheet dense FLOPS.
    pretrain: source — Chowdhery et al., "PaLM" (arXiv:2204.02311) Table 3 reports 46.2 %
    (PaLM), 32.5 % (Gopher), 30.2 % (MT-NLG), 21.3 % (GPT-3); Llama 2 13B's 368,640
    A100-hours for 2 T tokens (Touvron et al. 2023, Table 2) imply 38 %.
    Others: assumption — fine-tuning runs shorter sequences and smaller batches than
    pretraining; QLoRA dequantises NF4 weights on every matmul; decode-heavy inference
    is bounded by the memory roofline below, this is its compute-bound ceiling."""

    memory_bandwidth_efficiency: float = Field(default=0.60, gt=0, le=1)
    """Achieved share of datasheet HBM/GDDR bandwidth while decoding (assumption)."""

    multi_gpu_scaling: dict[str, float] = Field(default_factory=lambda: dict(_SCALING))
    """Efficiency kept per doubling of GPUs, by the offer's interconnect: 8 GPUs keep
    0.95³ ≈ 86 % over NVLink or another vendor's GPU fabric (Infinity Fabric) and
    0.80³ ≈ 51 % over PCIe (assumption; an unknown interconnect is treated as PCIe,
    never as NVLink, unless the catalog says the part only ships on a fabric board)."""

    sharded_pcie_factor: float = Field(default=0.70, gt=0, le=1)
    """Extra efficiency factor when ZeRO-3/FSDP shards training state over PCIe:
    every layer's parameters are all-gathered each step (assumption)."""

    fallback_network_gbps: float = Field(default=25.0, gt=0)
    """Inter-node Gbit/s of an offer whose provider states none, used only where the
    profile allows clusters over any network (``fabric = "any"``) or states a fabric
    without its bandwidth: the least "up to" figure AWS lists for a GPU instance
    (g4dn.xlarge, "Up to 25 Gigabit"), so an unknown network is never taken as fast."""

    # ---- spot -------------------------------------------------------------------------
    default_interruption_pct: float = Field(default=10.0, ge=0)
    """Share of spot capacity reclaimed per month where the provider publishes nothing
    (AWS Spot Advisor buckets are used where the collector recorded one). Source: the
    Spot Advisor data's own ``global_rate`` ("<10%") across all regions and types."""

    interruption_pct_by_provider: dict[str, float] = Field(default_factory=dict)
    """Per-provider override of ``default_interruption_pct`` (e.g. ``{azure = 15}``)."""

    restart_hours: float = Field(default=0.25, ge=0)
    """Time to get a replacement instance, reload the checkpoint and warm up (assumption)."""

    checkpoint_write_hours: float = Field(default=0.0, ge=0)
    """Cost of writing one checkpoint, added to every interval (δ in Daly's formula)."""

    @field_validator("efficiency", mode="before")
    @classmethod
    def _merge_efficiency(cls, value: Any) -> Any:
        return _merge_fractions(value, _EFFICIENCY, "efficiency")

    @field_validator("multi_gpu_scaling", mode="before")
    @classmethod
    def _merge_scaling(cls, value: Any) -> Any:
        return _merge_fractions(value, _SCALING, "multi_gpu_scaling")

    def efficiency_for(self, task: str) -> float:
        return self.efficiency[task]

    def interruption_pct(self, provider: str) -> float:
        return self.interruption_pct_by_provider.get(provider, self.default_interruption_pct)


def _merge_fractions(value: Any, defaults: dict[str, float], name: str) -> Any:
    """Overriding one key keeps the documented defaults for the others."""
    if not isinstance(value, dict):
        return value
    unknown = sorted(set(value) - set(defaults))
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(defaults)})")
    merged = {**defaults, **value}
    for key, fraction in merged.items():
        if not isinstance(fraction, int | float) or isinstance(fraction, bool):
            raise ValueError(f"{key}: expected a number, got {fraction!r}")
        if not 0 < fraction <= 1:
            raise ValueError(f"{key}: must be in (0, 1], got {fraction}")
    return {key: float(fraction) for key, fraction in merged.items()}
