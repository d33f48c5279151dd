"""Where a list route's page sits in the whole: ``X-Total-Count`` and ``Link`` headers.

The body stays the CLI's JSON rows (a script reads the same array either way); the
headers tell a client how many rows match and the URL of the next page (RFC 8288
``rel="next"``, a path on the host the client asked), so paging needs no guessing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from tracker.filters import Page

__all__ = ["MAX_OFFSET", "page_headers"]

MAX_OFFSET = 10_000_000
"""The largest ``offset`` taken: beyond every listing, inside every integer column."""


def page_headers(request: Request, page: Page[Any], offset: int) -> dict[str, str]:
    """``X-Total-Count``, and ``Link`` to the rows after this page when there are any."""
    headers = {"X-Total-Count": str(page.total)}
    following = offset + len(page.items)
    if page.items and following < page.total:
        query = [(k, v) for k, v in request.query_params.multi_items() if k != "offset"]
        query.append(("offset", str(following)))
        headers["Link"] = f'<{request.url.path}?{urlencode(query)}>; rel="next"'
    return headers
