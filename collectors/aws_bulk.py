"""AWS without credentials: on-demand and reserved prices from the public bulk offer files.

``{bulk_url}/offers/v1.0/aws/index.json`` names the EC2 offer's
``currentRegionIndexUrl``; that ``region_index.json`` lists every region with
the ``currentVersionUrl`` of its offer file and the file's ``versionEffectiveBeginDate``
(the file itself carries ``version``/``publicationDate``). Each regional file is
streamed through :func:`collectors.aws_bulk_stream.extract_offer_file` straight
from the response (never whole in memory, never on disk), keeping only Linux /
Shared / no-software / "Used" products of GPU and accelerator types, and every kept
product is priced by the credentialed path's own parser
(:func:`collectors.aws_pricelist.parse_price_list_item`): same offers, same
identity, same effective-hourly arithmetic.

Change detection. The store has no per-provider state, and an unchanged file must
still yield its offers or the runner would delist them. So what a file yielded is
remembered in a small cache file per region (``<cache>/aws-bulk/<region>.json``:
the file's version and the kept GPU items, some hundred KB): when
``region_index.json`` names the same ``currentVersionUrl`` as the cached one, the
cached items are priced again and the regional file is not downloaded.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import httpx
import platformdirs

from collectors.aws_bulk_hardware import accelerated, bulk_hardware
from collectors.aws_bulk_stream import BulkExtract, OfferFileError, extract_offer_file
from collectors.aws_hardware import InstanceHardware
from collectors.aws_pricelist import EXPECTED_ATTRIBUTES, parse_price_list_item
from collectors.base import CollectorError, RunContext, SkipItem
from collectors.http import USER_AGENT, HttpClient, HttpError, tls_context
from tracker.models import Offer, OfferKey

__all__ = ["BulkSource", "default_cache_dir", "wanted_product"]

log = logging.getLogger(__name__)

INDEX_PATH = "/offers/v1.0/aws/index.json"
OFFER_CODE = "AmazonEC2"
COMPUTE_FAMILIES = frozenset({"Compute Instance", "Compute Instance (bare metal)"})
READ_BYTES = 1 << 20


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("gpu-tracker")) / "aws-bulk"


def wanted_product(product: Mapping[str, Any]) -> bool:
    """What the credentialed path's server-side filter asks for, on an accelerated type."""
    attrs = product.get("attributes") or {}
    if product.get("productFamily") not in COMPUTE_FAMILIES:
        return False
    if any(attrs.get(k) != v for k, v in EXPECTED_ATTRIBUTES.items()):
        return False
    return accelerated(attrs)


class _ByteStream(io.RawIOBase):
    """A response's byte iterator as a readable raw stream (for TextIOWrapper)."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self._rest:
            try:
                self._rest = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(view), len(self._rest))
        view[:size] = self._rest[:size]
        self._rest = self._rest[size:]
        return size


def text_stream(chunks: Iterator[bytes]) -> IO[str]:
    """UTF-8 text over a byte iterator, read in large blocks."""
    raw = io.BufferedReader(_ByteStream(chunks), buffer_size=READ_BYTES)
    return io.TextIOWrapper(raw, encoding="utf-8")


class BulkSource:
    """Fetches region_index.json and the regional offer files (see the module docstring)."""

    def __init__(
        self, base_url: str, http: HttpClient, timeout: float, cache_dir: Path | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http
        self.timeout = timeout
        self.cache_dir = cache_dir or default_cache_dir()
        self.downloads = 0
        """Regional offer files downloaded by this source (tests and logs)."""

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else self.base_url + path

    def region_index(self) -> dict[str, str]:
        """region code -> the path of its current offer file."""
        try:
            index = self.http.get_json(self.url(INDEX_PATH))
            offer = index["offers"][OFFER_CODE]
            regions = self.http.get_json(self.url(offer["currentRegionIndexUrl"]))["regions"]
            return {code: str(entry["currentVersionUrl"]) for code, entry in regions.items()}
        except HttpError as exc:
            raise CollectorError(f"aws: cannot read the bulk price list index: {exc}") from exc
        except (KeyError, TypeError, AttributeError) as exc:
            raise CollectorError(
                f"aws: bulk price list index at {self.base_url}: missing {exc}"
            ) from None

    def extract(self, region: str, path: str) -> BulkExtract:
        """The region's GPU items: from the cache when ``path`` is the cached version."""
        cached = self._cached(region, path)
        if cached is not None:
            log.info("aws: %s offer file unchanged (%s); not downloaded", region, cached.version)
            return cached
        url = self.url(path)
        headers = {"User-Agent": USER_AGENT}
        try:
            with httpx.stream(
                "GET",
                url,
                headers=headers,
                timeout=self.timeout,
                follow_redirects=True,
                verify=tls_context(),
            ) as response:
                response.raise_for_status()
                self.downloads += 1
                extract = extract_offer_file(
                    text_stream(response.iter_bytes(READ_BYTES)), wanted_product, url
                )
        except httpx.HTTPError as exc:
            raise CollectorError(f"aws: GET {url}: {type(exc).__name__}: {exc}") from exc
        except OfferFileError as exc:
            raise CollectorError(f"aws: {exc}") from None
        self._save(region, path, extract)
        return extract

    def _cache_file(self, region: str) -> Path:
        return self.cache_dir / f"{region}.json"

    def _cached(self, region: str, path: str) -> BulkExtract | None:
        try:
            data = json.loads(self._cache_file(region).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("url") != path:
            return None
        return BulkExtract(
            version=str(data.get("version", "")),
            publication_date=str(data.get("publicationDate", "")),
            items=data.get("items") or {},
        )

    def _save(self, region: str, path: str, extract: BulkExtract) -> None:
        body = {
            "url": path,
            "version": extract.version,
            "publicationDate": extract.publication_date,
            "items": extract.items,
        }
        target = self._cache_file(region)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".tmp")
            tmp.write_text(json.dumps(body))
            tmp.replace(target)
        except OSError as exc:  # the next run downloads again; this one is still good
            log.warning("aws: cannot cache %s's offer file version: %s", region, exc)


def hardware_of(
    extract: BulkExtract, ctx: RunContext, include_accelerators: bool
) -> dict[str, InstanceHardware]:
    """The hardware of every type in ``extract``, each unreadable type one skip."""
    from tracker.catalog import resolve_gpu

    result: dict[str, InstanceHardware] = {}
    failed: set[str] = set()
    for item in extract.items.values():
        attrs = item["product"].get("attributes") or {}
        name = str(attrs.get("instanceType") or "")
        if name in result or name in failed:
            continue
        try:
            hw = bulk_hardware(attrs, include_accelerators, resolve_gpu)
        except SkipItem as exc:
            failed.add(name)
            ctx.skip(exc.reason, exc.detail)
            continue
        if hw is not None:
            result[name] = hw
    return result


def bulk_offers(ctx: RunContext, region: str, extract: BulkExtract, accel: bool) -> Iterator[Offer]:
    """Every kept item priced by the Price List parser; a duplicate key is one skip."""
    hardware = hardware_of(extract, ctx, accel)
    seen: set[OfferKey] = set()
    for sku in sorted(extract.items):
        item = extract.items[sku]
        if (item["product"].get("attributes") or {}).get("instanceType") not in hardware:
            continue
        offers = parse_price_list_item(
            item, hardware, ctx.skip, region_hint=region, pricing_scope=ctx.pricing_scope
        )
        for offer in offers:
            key = offer.key()
            if key in seen:
                ctx.skip("duplicate_offer", f"{key!r}: a second offer file product")
                continue
            seen.add(key)
            yield offer
