"""How much activation memory a CNN keeps per training image, from a measured figure.

A CNN's activations are not the transformer formula's and not the sum of every
intermediate tensor either (what ONNX graph tools report: 279 MB per ResNet-50 image in
fp32, which put a batch of 128 at 17 GiB and off every 16 GB GPU, while NVIDIA's own
recipe trains 256 images per 16 GB V100). Frameworks free and reuse buffers; what a
training step holds at its peak is measured, so each architecture here carries the bytes
per image one published training run implies at its resolution and precision.

The figure is derived so that the whole estimate reproduces the measurement: the peak
memory of the run less the model state the estimate adds on its own (weights, gradients
and optimizer at ``adam_mixed_precision_bytes_per_param``), divided by the images per GPU.
fp32 holds twice the bytes of 16-bit activations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.kinds import Precision

if TYPE_CHECKING:
    from tracker.recommend.profiles import Profile

__all__ = ["ARCHITECTURES", "CnnMemory", "cnn_activation_bytes"]

GIB = float(1 << 30)


@dataclass(frozen=True, slots=True)
class CnnMemory:
    name: str
    resolution: int
    """Square input side in pixels the figure was measured at."""
    params: float
    peak_gib: float
    """Peak GPU memory of the measured training step (GiB, per GPU)."""
    images_per_gpu: int
    source: str
    conditions: str

    def half_bytes_per_image(self, a: Assumptions) -> float:
        """16-bit activation bytes per image: (peak - model state) / images per GPU."""
        state = self.params * a.adam_mixed_precision_bytes_per_param
        return (self.peak_gib * GIB - state) / self.images_per_gpu


ARCHITECTURES: dict[str, CnnMemory] = {
    m.name: m
    for m in (
        # mmclassification's fp16 ResNet-50 (resnet50_b32x8_fp16_imagenet, model of
        # 2021-03-20): Mem (GB) 1.9 at 32 images per GPU. With 16 B/param of state:
        # (1.9 x 2^30 - 25.56e6 x 16) / 32 = (2,040,109,466 - 408,960,000) / 32
        # = 50.97 MB per 224x224 image in fp16.
        CnnMemory(
            name="resnet50",
            resolution=224,
            params=25.56e6,
            peak_gib=1.9,
            images_per_gpu=32,
            source=(
                "https://github.com/open-mmlab/mmpretrain/blob/"
                "6bdb954500b194c9013d8ec142c6b8b378b2244b/configs/fp16/README.md"
            ),
            conditions=(
                "ResNet-50 row, Mem (GB) 1.9: mmclassification fp16 training (loss "
                "scaling), 8 GPUs x 32 images of 224x224, PyTorch max_memory_allocated"
            ),
        ),
    )
}


def cnn_activation_bytes(p: Profile, a: Assumptions) -> float:
    """Activation bytes of one GPU's micro-batch for a cnn_training profile.

    The profile's own ``activation_bytes_per_image`` (fp32 bytes) wins; else its
    ``cnn_architecture``'s measured figure; else ResNet-50's per parameter."""
    half = p.compute in (Precision.BF16, Precision.FP16)
    if p.activation_bytes_per_image is not None:
        per_image_fp32 = p.activation_bytes_per_image
    elif p.cnn_architecture is not None:
        per_image_fp32 = 2.0 * ARCHITECTURES[p.cnn_architecture].half_bytes_per_image(a)
    else:
        per_image_fp32 = a.resnet50_activation_bytes_per_param_image * p.params
    return per_image_fp32 * p.batch * (0.5 if half else 1.0)
