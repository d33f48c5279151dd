"""Provider endpoints that fail the four ways a real outage does, all on 127.0.0.1.

* ``http_503``: a server that answers every request ``503 Service Unavailable``;
* ``refused``: a port nothing listens on (the connection is refused);
* ``hang``: a server that accepts connections and never answers (only the client's
  timeout ends a request);
* ``unresolvable``: a host name that does not resolve. Simulated in the process that
  makes the request (:func:`unresolvable`): names under ``.invalid`` (a top-level
  domain reserved never to exist, RFC 6761) fail in ``socket.getaddrinfo`` as a
  resolver's "Name or service not known" does, and no resolver is ever asked.

A ``serve`` subprocess gets the resolver failure through :data:`PRELUDE`, code run
before the CLI (``python -c``) that needs nothing of this repository's tests, so it
also works for a process running another checkout's code; ``bench/soak.py`` uses the
same module.
"""

from __future__ import annotations

import inspect
import socket
import threading
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

__all__ = [
    "FAILURES",
    "PRELUDE",
    "UNRESOLVABLE_HOST",
    "Outage",
    "failing_getaddrinfo",
    "unresolvable",
]

FAILURES = ("http_503", "refused", "hang", "unresolvable")
UNRESOLVABLE_HOST = "prices.gpu-tracker.invalid"
HELD_CONNECTIONS = 64
"""Connections the hanging server keeps open at most (older ones are closed)."""


def failing_getaddrinfo(suffix: str = ".invalid") -> Callable[..., Any]:
    """``socket.getaddrinfo`` failing for every name ending in ``suffix``, as a
    resolver that does not know it does; other names (``127.0.0.1``) resolve as
    before."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name.rstrip(".").endswith(suffix):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    return getaddrinfo


def unresolvable(suffix: str = ".invalid") -> None:
    """Install :func:`failing_getaddrinfo` for the life of this process (tests patch it
    with ``monkeypatch`` instead)."""
    socket.getaddrinfo = failing_getaddrinfo(suffix)


PRELUDE = "\n".join(
    [
        "from __future__ import annotations",
        "import socket",
        "from typing import Any, Callable",
        inspect.getsource(failing_getaddrinfo),
        "socket.getaddrinfo = failing_getaddrinfo()",
    ]
)
"""Python run first in a subprocess (``python -c PRELUDE + CLI``): its ``.invalid``
names fail to resolve, as :func:`unresolvable` makes them here."""


class _Unavailable(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        body = b"upstream unavailable"
        self.send_response(503)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Outage:
    """The failing endpoints, started on enter: :attr:`origins` by failure kind."""

    def __init__(self) -> None:
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
        self._http.daemon_threads = True
        self._hang = socket.socket()
        self._hang.bind(("127.0.0.1", 0))
        self._hang.listen(128)
        self._held: deque[socket.socket] = deque()
        with socket.socket() as closed:  # bound then closed: nothing listens there
            closed.bind(("127.0.0.1", 0))
            refused_port = closed.getsockname()[1]
        self.origins = {
            "http_503": f"http://127.0.0.1:{self._http.server_address[1]}",
            "refused": f"http://127.0.0.1:{refused_port}",
            "hang": f"http://127.0.0.1:{self._hang.getsockname()[1]}",
            "unresolvable": f"http://{UNRESOLVABLE_HOST}",
        }
        self._threads = [
            threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True),
            threading.Thread(target=self._hold, daemon=True),
        ]

    def _hold(self) -> None:
        """Accept and never answer; a bounded number of connections stay open."""
        while True:
            try:
                conn, _ = self._hang.accept()
            except OSError:  # closed: the outage is over
                return
            self._held.append(conn)
            while len(self._held) > HELD_CONNECTIONS:
                self._held.popleft().close()

    def __enter__(self) -> Self:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._http.shutdown()
        self._http.server_close()
        with suppress(OSError):
            self._hang.shutdown(socket.SHUT_RDWR)  # wakes the accept() of _hold
        self._hang.close()
        while self._held:
            self._held.popleft().close()
