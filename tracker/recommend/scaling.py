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
    step     = compute + exposed + latency × log2(N)

``1.5 × 2(n−1)/n``: FSDP all-gathers the parameters in the forward and again in the
backward pass and reduce-scatters the gradients: three ring collectives of
``(n−1)/n × bytes`` each. The ring runs one channel per NIC rail, so the node's whole
inter-node bandwidth carries it (NCCL's bus bandwidth across nodes is the node's NIC
total). ``overlap`` (the share of compute time that can hide communication) and
``latency`` (a per-step synchronisation cost that grows with the depth of the node
tree) are fitted on published runs (:mod:`tracker.recommend.scaling_fit`), not assumed.

A ``global_batch`` caps the useful data-parallel width: with fewer sequences per step
than GPUs, the extra GPUs idle (they add cost, not speed).
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


@dataclass(frozen=True, slots=True)
class StepTimes:
    """One step split into what the GPUs compute and what they wait for (seconds)."""

    compute: FloatArray
    communication: FloatArray
    """Exposed communication and synchronisation: what is not hidden behind compute."""
    useful: FloatArray
    """Share of the GPUs doing useful work (< 1 when global_batch caps the width)."""

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
) -> StepTimes:
    """Step times, broadcast over every argument (offers × node counts, or the fit's
    grid of ``overlap`` × ``latency_s``).

    ``local_tokens``: tokens one GPU processes per step when every GPU holds a share of
    the batch; ``tokens_per_gpu_s``: the one-node per-GPU rate; ``param_bytes``: bytes of
    the parameters as communicated; ``node_gbps``: one node's inter-node Gbit/s."""
    n = nodes * gpus_per_node
    useful = np.ones(np.broadcast(n, local_tokens).shape)
    tokens = np.broadcast_to(local_tokens, useful.shape).astype(np.float64)
    if global_batch is not None:
        # at most one sequence per GPU and step: past that the extra GPUs idle
        busy = np.minimum(n, global_batch)
        useful = busy / n
        tokens = global_batch * sequence_length / busy
    with np.errstate(invalid="ignore", divide="ignore"):
        compute = tokens / tokens_per_gpu_s
        ring = COLLECTIVE_PASSES * 2.0 * (n - 1.0) / n * param_bytes / (node_gbps * 1e9 / 8.0)
        comm = np.where(nodes > 1, ring, 0.0)
        exposed = np.maximum(comm - overlap * compute, 0.0)
        waiting = exposed + latency_s * np.log2(np.maximum(nodes, 1.0))
    return StepTimes(compute, waiting, useful)
