"""The public Spot Instance Advisor feed: interruption frequency and savings per type.

AWS publishes it as one static JSON document (no credentials) behind the Spot
Instance Advisor page. It is advisory: when it cannot be fetched or read, spot
prices are still stored, only without the risk attributes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from collectors.aws_spot import SpotRisk
from collectors.http import HttpClient, HttpError
from tracker.settings import HttpSettings

__all__ = ["AdvisorError", "fetch_spot_advisor", "parse_spot_advisor"]

log = logging.getLogger(__name__)

# Spot Advisor data is published per OS; this tracker prices Linux only.
ADVISOR_OS = "Linux"


class AdvisorError(ValueError):
    """The feed does not have the shape this parser knows; the message says where."""


def _bucket_bound(entry: Mapping[str, Any]) -> int:
    """Upper bound (percent) of an interruption bucket; ">20%" is open-ended, so 100."""
    label = str(entry.get("label", ""))
    if label.startswith(">"):
        return 100
    digits = label.rstrip("%").split("-")[-1].lstrip("<")
    if digits.isdigit():
        return int(digits)
    maximum = entry.get("max")
    if isinstance(maximum, int):
        return maximum
    raise AdvisorError(f"ranges: cannot read a bound from {dict(entry)!r}")


def parse_spot_advisor(payload: Any) -> dict[str, dict[str, SpotRisk]]:
    """The feed -> ``{region: {instance_type: SpotRisk}}`` for Linux.

    ``r`` is an index into ``ranges``; the label (``"<5%"``) is what the
    Advisor page shows, and its upper bound is what the recommender prices.
    The feed's ``max`` is a plotting value (``11`` for "5-10%"), so the bound
    comes from the label.
    """
    if not isinstance(payload, Mapping):
        raise AdvisorError(f"expected a JSON object, got {type(payload).__name__}")
    ranges = payload.get("ranges")
    advisor = payload.get("spot_advisor")
    if not isinstance(ranges, list) or not isinstance(advisor, Mapping):
        raise AdvisorError("missing 'ranges' list or 'spot_advisor' object")
    buckets: dict[int, tuple[str, int]] = {}
    for entry in ranges:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("index"), int):
            raise AdvisorError(f"ranges: bad entry {entry!r}")
        buckets[entry["index"]] = (str(entry.get("label", "")), _bucket_bound(entry))
    result: dict[str, dict[str, SpotRisk]] = {}
    for region, by_os in advisor.items():
        types = by_os.get(ADVISOR_OS) if isinstance(by_os, Mapping) else None
        if not isinstance(types, Mapping):
            continue
        per_type: dict[str, SpotRisk] = {}
        for instance_type, figures in types.items():
            if not isinstance(figures, Mapping):
                continue
            bucket = buckets.get(figures.get("r"))  # type: ignore[arg-type]
            savings = figures.get("s")
            if bucket is None or not isinstance(savings, int):
                log.debug("spot advisor: skipping %s %s: %r", region, instance_type, figures)
                continue
            per_type[instance_type] = SpotRisk(bucket[0], bucket[1], savings)
        result[region] = per_type
    return result


def fetch_spot_advisor(
    url: str, http_settings: HttpSettings, *, client: HttpClient | None = None
) -> dict[str, dict[str, SpotRisk]]:
    """Download and parse the feed; on any failure log one warning and return ``{}``."""
    owned = client is None
    http = client or HttpClient(http_settings)
    try:
        return parse_spot_advisor(http.get_json(url))
    except (HttpError, AdvisorError) as exc:
        log.warning("aws: spot advisor data unavailable, spot offers stored without it: %s", exc)
        return {}
    finally:
        if owned:
            http.close()
