"""The local ECB server the FX tests fetch from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fx.ecb_server import EcbServer


@pytest.fixture
def ecb() -> Iterator[EcbServer]:
    server = EcbServer()
    yield server
    server.stop()
