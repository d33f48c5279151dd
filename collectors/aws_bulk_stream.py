"""Stream a Price List bulk offer file (JSON) and keep only the products asked for.

A regional ``AmazonEC2`` offer file is hundreds of MB to GB of one JSON object::

    {"formatVersion", "disclaimer", "offerCode", "version", "publicationDate",
     "products": {sku: product, ...},
     "terms": {"OnDemand": {sku: {code: term}}, "Reserved": {sku: {code: term}}},
     "attributesList": {...}}

Why stdlib and JSON, not ijson or the CSV variant: the lock files carry no streaming
JSON parser, and a pure-Python event parser is many times slower than the C
scanner. Here the outer two levels are walked by hand and every member value
(one product, or one sku's terms) is decoded by ``json.JSONDecoder.raw_decode``,
the same C scanner ``json.load`` uses, from a bounded text buffer. So the time is
about that of ``json.load`` while memory holds one buffer and the kept products,
never the file. The CSV variant would need its header row mapped onto the
attribute names the parser (:mod:`collectors.aws_pricelist`) already reads; the
JSON keeps one item shape for both paths. The file must name ``products`` before
``terms`` (as AWS writes it), otherwise the terms could not be filtered as they
stream by; a file that does not is a clear error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = ["BulkExtract", "OfferFileError", "extract_offer_file"]

CHUNK_CHARS = 1 << 20
MAX_VALUE_CHARS = 64 << 20
"""No one product or sku's terms is this large: past it a value is malformed, not cut
by a read (so bad input never makes the buffer grow to the size of the file)."""
_WS = " \t\n\r"
_DECODER = json.JSONDecoder()

ProductFilter = Callable[[Mapping[str, Any]], bool]


class OfferFileError(ValueError):
    """The offer file is not the JSON shape above; the message says where."""


@dataclass
class BulkExtract:
    """The header and the wanted products of one offer file, as GetProducts items."""

    version: str = ""
    publication_date: str = ""
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    """sku -> ``{"product": ..., "terms": {"OnDemand": {...}, "Reserved": {...}}}``."""


class _Reader:
    """A text buffer over a stream with just enough JSON tokenizing for two levels."""

    def __init__(self, stream: IO[str], name: str) -> None:
        self.stream = stream
        self.name = name
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.consumed = 0  # characters dropped from the front of buf, for messages

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = self.stream.read(CHUNK_CHARS)
        if not chunk:
            self.eof = True
            return False
        self.consumed += self.pos
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def error(self, message: str) -> OfferFileError:
        return OfferFileError(f"{self.name}: {message} at character {self.consumed + self.pos}")

    def peek(self) -> str:
        """The next non-blank character (not consumed); '' at the end."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.error(f"expected {char!r}, found {self.peek()!r}")
        self.pos += 1

    def value(self) -> Any:
        """One JSON value, decoded by the C scanner; refills until it is complete."""
        self.peek()
        while True:
            try:
                result, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if len(self.buf) - self.pos <= MAX_VALUE_CHARS and self._more():
                    continue
                raise self.error(f"bad JSON ({exc.msg})") from None
            # A number at the buffer's end may go on in the next chunk: make sure it ended.
            at_end = end == len(self.buf) and not isinstance(result, dict | list | str)
            if at_end and self._more():
                continue
            self.pos = end
            return result

    def members(self) -> Any:
        """Iterates ``(key, reader positioned at the value)`` of an object; the caller
        must consume each value (``value()`` or a nested ``members()``)."""
        self.expect("{")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise self.error("object key is not a string")
            self.expect(":")
            yield key
            following = self.peek()
            self.pos += 1
            if following == "}":
                return
            if following != ",":
                raise self.error(f"expected ',' or '}}', found {following!r}")


def extract_offer_file(stream: IO[str], wanted: ProductFilter, name: str) -> BulkExtract:
    """The header and the products ``wanted`` accepts (with their OnDemand and
    Reserved terms) of the offer file read from ``stream``; ``name`` is for errors."""
    reader = _Reader(stream, name)
    extract = BulkExtract()
    seen_products = False
    for key in reader.members():
        if key == "products":
            _products(reader, wanted, extract.items)
            seen_products = True
        elif key == "terms":
            if not seen_products:
                raise reader.error("'terms' comes before 'products'; cannot stream it")
            _terms(reader, extract.items)
        else:
            value = reader.value()
            if key == "version":
                extract.version = str(value)
            elif key == "publicationDate":
                extract.publication_date = str(value)
    if reader.peek() != "":
        raise reader.error("trailing data after the offer file's object")
    return extract


def _products(reader: _Reader, wanted: ProductFilter, items: dict[str, dict[str, Any]]) -> None:
    for sku in reader.members():
        product = reader.value()
        if not isinstance(product, dict):
            raise reader.error(f"product {sku} is not an object")
        attrs = product.get("attributes")
        if isinstance(attrs, Mapping) and wanted(product):
            items[sku] = {"product": product, "terms": {}}


def _terms(reader: _Reader, items: dict[str, dict[str, Any]]) -> None:
    for term_type in reader.members():
        keep = term_type in ("OnDemand", "Reserved")
        for sku in reader.members():
            terms = reader.value()
            item = items.get(sku) if keep else None
            if item is not None and isinstance(terms, dict):
                item["terms"][term_type] = terms
