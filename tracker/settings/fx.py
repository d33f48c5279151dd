"""Settings section `[fx]`."""

from __future__ import annotations

from pydantic import Field, field_validator

from tracker.settings.base import Section, endpoint_origin


class FxSettings(Section):
    """ECB euro reference rates (collectors/fx.py): public files, no key."""

    enabled: bool = True
    endpoint_url: str | None = None
    """Replaces scheme, host and port of ``https://www.ecb.europa.eu`` (the documented
    paths ``/stats/eurofxref/…`` are kept): a mirror, a proxy, a test server."""
    backfill_after_days: int = Field(default=4, ge=1, le=90)
    """Fetch the 90-day file instead of the daily one when the store has no rates yet
    or its newest is older than this many days (a tracker that was down a while)."""

    _origin = field_validator("endpoint_url")(endpoint_origin)
