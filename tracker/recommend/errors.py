"""The recommender's one error for unusable input (kept apart so the profile and the
measurement modules both raise it without importing each other)."""

from __future__ import annotations

__all__ = ["ProfileError"]


class ProfileError(ValueError):
    """A profile or profiles file that cannot be used; the message is one line."""
