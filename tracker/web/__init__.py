"""The read-only dashboard and JSON API (``/api/v1``) served by ``serve`` and ``web``.

``app`` builds the one ASGI app (pages, API, health probes, /metrics); ``api`` and
``pages`` are its routes over the read layer the CLI uses (:mod:`tracker.views`, the
Overview's and the Profiles page's figures included); ``svg`` draws the charts on the server;
``security`` and ``errors`` hold the token check, the headers and one-line errors.
"""

from tracker.web.app import WebContext, create_app

__all__ = ["WebContext", "create_app"]
