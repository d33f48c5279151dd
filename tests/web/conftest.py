"""One hand-built SQLite store and one real uvicorn server per test module."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from pydantic import SecretStr

from tests.web.store import fill
from tracker.service.web import WebServer
from tracker.settings import Settings, WebSettings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine
from tracker.web import WebContext, create_app
from tracker.web.health import RunLogHealth


@dataclass
class Site:
    url: str
    engine: Engine
    settings: Settings
    database_url: str

    def get(self, path: str, **kw: object) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", timeout=30, **kw)  # type: ignore[arg-type]


def serve(settings: Settings, engine: Engine) -> WebServer:
    health = RunLogHealth(settings, engine)
    app = create_app(WebContext(settings, engine, health.routes(), health.report))
    server = WebServer("127.0.0.1:0", app)
    server.start()
    return server


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Engine]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('web') / 'tracker.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    fill(engine, Settings(database_url=url))
    yield url, engine
    engine.dispose()


@pytest.fixture(scope="module")
def site(store_url: tuple[str, Engine]) -> Iterator[Site]:
    url, engine = store_url
    settings = Settings(database_url=url, web=WebSettings(page_size=3))
    server = serve(settings, engine)
    yield Site(server.url, engine, settings, url)
    server.stop()


TOKEN = "s3cret-web-token-4242"


@pytest.fixture(scope="module")
def locked_site(store_url: tuple[str, Engine]) -> Iterator[Site]:
    url, engine = store_url
    settings = Settings(database_url=url, web=WebSettings(token=SecretStr(TOKEN)))
    server = serve(settings, engine)
    yield Site(server.url, engine, settings, url)
    server.stop()
