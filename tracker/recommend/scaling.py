"""How a training step slows down when a job spans N nodes of G GPUs: compute, the
communication the parallel layout needs, and how much of it hides behind compute.

Layout: sharded data parallel (FSDP / ZeRO-3) over every GPU of the cluster; tensor
parallelism, where a job uses it, stays inside one node's NVLink, so the single-node
rate the ranker calibrates (:mod:`tracker.recommend.calibration`) already contains it
and its cost is never paid across nodes. Sharding the state over N × G GPUs is also
what makes a model that does not fit one node fit several: pipeline stages are not
modelled (their bubble would only add to the communication estimated here).

Per step and per GPU, on ``n = N × G`` GPUs::

    compute  = tokens per GPU per step ÷ the one-node per-GPU rate
    comm     = 1.5 × 2(n−1)/n × parameter bytes ÷ node bandwidth     (N > 1; else 0)
    exposed  = max(0, comm − overlap × compute)
    step     = compute + exposed + latency × log2(N) + split × (width − 1) × compute

(``width``, GPUs one sequence is split over, is 1 unless a global batch has fewer
sequences than GPUs: see below.)

``1.5 × 2(n−1)/n``: FSDP all-gathers the parameters in the forward and again in the
backward pass and reduce-scatters the gradients: three ring collectives of
``(n−1)/n × bytes`` each. The ring runs one channel per NIC rail, so the node's whole
inter-node bandwidth carries it (NCCL's bus bandwidth across nodes is the node's NIC
total). ``overlap`` (the share of compute time that can hide communication) and
``latency`` (a per-step synchronisation cost that grows with the depth of the node
tree) are fitted on published runs (:mod:`tracker.recommend.scaling_fit`), not assumed.

A ``global_batch`` (sequences per step) caps the data-parallel width at one sequence per
replica, not the GPUs used: with more GPUs than sequences, each sequence is split over
``width = n ÷ global_batch`` GPUs of one node (tensor and context parallelism over NVLink,
as MLPerf Training's Llama 2 70B LoRA runs do at global batch 8 on 64 H100s: TP 4 × CP 2).
Splitting a sequence costs its own communication: per GPU the activations a tensor/context
parallel group exchanges stay about the same while its compute falls as 1/width, so the
exposed cost is ``split × (width − 1) × compute``, ``split`` fitted on published fine-tuning
runs. The width stops at the node's GPUs (model parallelism is kept inside NVLink): past
``global_batch × G`` GPUs the extra ones idle (they add cost, not speed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["COLLECTIVE_PASSES", "Scaling", "StepTimes", "step_times"]

FloatArray = npt.NDArray[np.float64]

COLLECTIVE_PASSES = 1.5
"""FSDP's three ring collectives per step in units of one all-reduce's 2(n−1)/n."""


@dataclass(frozen=True, slots=True)
class Scaling:
    """The fitted constants of the model."""

    overlap: float
    """Share of a step's compute time that communication can hide behind (0..1)."""
    latency_s: float
    """Seconds per step added per doubling of nodes (synchronisation, stragglers)."""
    split: float = 0.0
    """Exposed tensor/context-parallel communication per extra GPU a sequence is split
    over, as a share of the step's compute (fitted on the fine-tuning rows)."""


@dataclass(frozen=True, slots=True)
class StepTimes:
    """One step split into what the GPUs compute and what they wait for (seconds)."""

    compute: FloatArray
    communication: FloatArray
    """Exposed communication and synchronisation: what is not hidden behind compute."""
    useful: FloatArray
    """Share of the GPUs doing useful work (< 1 past global_batch x GPUs per node)."""

    @property
    def step(self) -> FloatArray:
        return self.compute + self.communication

    @property
    def efficiency(self) -> FloatArray:
        """Per-GPU throughput at this size ÷ at one node."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.useful * self.compute / self.step


def step_times(
    overlap: FloatArray | float,
    latency_s: FloatArray | float,
    *,
    nodes: FloatArray,
    gpus_per_node: FloatArray,
    local_tokens: FloatArray,
    tokens_per_gpu_s: FloatArray,
    param_bytes: FloatArray,
    node_gbps: FloatArray,
    global_batch: float | None = None,
    sequence_length: float = 1.0,
    split: FloatArray | float = 0.0,
) -> StepTimes:
    """Step times, broadcast over every argument (offers × node counts, or the fit's
    grid of ``overlap`` × ``latency_s``).

    ``local_tokens``: tokens one GPU processes per step when every GPU holds a share of
    the batch; ``tokens_per_gpu_s``: the one-node per-GPU rate; ``param_bytes``: bytes of
    the parameters as communicated; ``node_gbps``: one node's inter-node Gbit/s;
    ``split``: the fitted cost of splitting a sequence over more GPUs (see the module doc)."""
    n = nodes * gpus_per_node
    useful = np.ones(np.broadcast(n, local_tokens).shape)
    tokens = np.broadcast_to(local_tokens, useful.shape).astype(np.float64)
    width = np.ones(useful.shape)
    if global_batch is not None:
        # one sequence per data-parallel replica at most; a replica spans up to one
        # node's GPUs (tensor/context parallel over NVLink); past that GPUs idle
        width = np.clip(n / global_batch, 1.0, gpus_per_node) * width
        busy = np.minimum(n, global_batch * width)
        useful = busy / n
        tokens = global_batch * sequence_length / busy
    with np.errstate(invalid="ignore", divide="ignore"):
        compute = tokens / tokens_per_gpu_s
        ring = COLLECTIVE_PASSES * 2.0 * (n - 1.0) / n * param_bytes / (node_gbps * 1e9 / 8.0)
        comm = np.where(nodes > 1, ring, 0.0)
        exposed = np.maximum(comm - overlap * compute, 0.0)
        waiting = exposed + latency_s * np.log2(np.maximum(nodes, 1.0))
        waiting = waiting + split * (width - 1.0) * compute
    return StepTimes(compute, waiting, useful)
