"""A profile's cluster fields: how many instances of an offer the job may span, by when
it must finish and over which network (a base of :class:`~tracker.recommend.profiles.Profile`,
kept apart so the profile module stays within its size)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from tracker.recommend.kinds import DEFAULT_MAX_NODES, FabricNeed, parse_hours, parse_nodes

__all__ = ["CLUSTER_FIELDS", "ClusterFields"]

CLUSTER_FIELDS = ("nodes", "max_nodes", "deadline_hours", "global_batch", "fabric")
"""Added after profiles had fingerprints: left out of the hash while unset."""


class ClusterFields(BaseModel):
    """``gpu_count`` stays GPUs per instance; these say how many instances."""

    # clusters: how many instances of the offer the job spans (gpu_count stays per instance)
    nodes: int | Literal["auto"] | None = None
    """Instances per job; "auto" sizes 1..max_nodes (cheapest that meets the deadline).
    Unset: one, unless a deadline asks for sizing."""
    max_nodes: int | None = Field(default=None, ge=1, le=1024)
    deadline_hours: float | None = Field(default=None, gt=0)
    """Wall-clock hours the job must finish in ("10d", "36h" or hours)."""
    global_batch: int | None = Field(default=None, ge=1)
    """Sequences (images) per optimizer step: caps the useful data-parallel width."""
    fabric: FabricNeed | None = None
    """Which inter-node network a cluster may use (unset: preferred)."""

    @field_validator("nodes", mode="before")
    @classmethod
    def _nodes(cls, value: Any) -> Any:
        return parse_nodes(value)

    @field_validator("deadline_hours", mode="before")
    @classmethod
    def _deadline(cls, value: Any) -> Any:
        return parse_hours(value)

    @field_validator("fabric", mode="before")
    @classmethod
    def _fabric(cls, value: Any) -> Any:
        if value is None or isinstance(value, FabricNeed):
            return value
        if not isinstance(value, str) or value.strip().lower() not in set(FabricNeed):
            raise ValueError(f"{value!r} is not one of {', '.join(FabricNeed)}")
        return FabricNeed(value.strip().lower())

    @property
    def sizes_clusters(self) -> bool:
        """The job may span more than one instance (a node count or a deadline asks)."""
        return self.nodes == "auto" or (self.nodes or 1) > 1 or self.deadline_hours is not None

    @property
    def fabric_need(self) -> FabricNeed:
        return self.fabric or FabricNeed.PREFERRED

    @property
    def node_counts(self) -> tuple[int, int]:
        """The smallest and largest node count to consider."""
        if isinstance(self.nodes, int):
            return self.nodes, self.nodes
        return (1, self.max_nodes or DEFAULT_MAX_NODES) if self.sizes_clusters else (1, 1)
