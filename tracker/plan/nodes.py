"""Which instances can be the nodes of a training cluster (``plan --fabric required``).

A steady fleet that one job spans needs its instances joined by a fabric built for
collectives (``tracker.models.RDMA_FABRICS``: InfiniBand, EFA, RoCE, GPUDirect-TCPX,
TPU ICI) and GPUs that share a box: sixteen single-GPU boxes put every gradient
exchange on the network, however fast it is. So a node qualifies when the provider
*states* an RDMA-class fabric for it (``unknown`` never does: not stated is not fast)
and it holds at least two GPUs. An 8-GPU PCIe box with EFA (g5.48xlarge) qualifies;
the collectives inside it are slower than NVLink, which ``recommend`` weighs, not this
rule.
"""

from __future__ import annotations

from decimal import Decimal

from tracker.models import RDMA_FABRICS, Fabric

__all__ = ["FABRIC_CHOICES", "MIN_NODE_GPUS", "cluster_node"]

FABRIC_CHOICES = ("any", "required")
"""``plan --fabric``: ``any`` (every instance type) or ``required`` (cluster nodes only)."""
MIN_NODE_GPUS = Decimal(2)


def cluster_node(fabric: str, gpu_count: Decimal) -> bool:
    """Whether an instance type with this stated fabric and GPU count can be a node of
    a multi-node job (an unrecognised fabric text is not one)."""
    try:
        stated = Fabric(fabric)
    except ValueError:
        return False
    return stated in RDMA_FABRICS and gpu_count >= MIN_NODE_GPUS
