"""Issue 40 point 3: a laptop copies a team server's prices through its JSON API.

The team server is a real uvicorn of the web app on 127.0.0.1 over its own SQLite
store, filled from tests/fixtures/remote/ through the price-sheet collector and the
service-sheet import; a second store syncs from it with the ``remote`` collector.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import text

from collectors.base import NotConfigured, RunContext
from collectors.pricesheet import PriceSheetCollector
from collectors.remote import OFFERS_PATH, RemoteCollector, parse_offer
from tests.conftest import cli_runner
from tests.web.conftest import serve
from tracker.collect import run_collector
from tracker.collect_services import import_service_sheet, run_service_collector
from tracker.models import RunStatus
from tracker.settings import HttpSettings, RemoteSettings, Settings, WebSettings
from tracker.store import migrate, reads
from tracker.store.engine import Engine, make_engine
from tracker.store.series import service_prices

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "remote"
TOKEN = "team-server-token-5150"
RUN_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _store(path: Path) -> tuple[str, Engine]:
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    return url, engine


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Engine]]:
    """The team server: its store filled from the two sheets, served with a token."""
    url, engine = _store(tmp_path_factory.mktemp("team") / "tracker.db")
    settings = Settings(
        database_url=url,
        web=WebSettings(token=SecretStr(TOKEN)),
        pricesheet={"path": FIXTURES / "team-sheet.csv"},  # type: ignore[arg-type]
    )
    sheet = PriceSheetCollector.from_settings(settings)
    assert run_collector(engine, sheet, settings, now=RUN_AT).ok
    services = import_service_sheet(
        engine, FIXTURES / "team-services.csv", provider="sheet", source="sheet", complete=True
    )
    assert services.ok, services.error
    server = serve(settings, engine)
    yield server.url, engine
    server.stop()
    engine.dispose()


def _settings(tmp_path: Path, url: str, token: str | None = TOKEN) -> Settings:
    """A laptop's settings: the team server's URL and token, no retries (a refused
    connection fails at once), the ETag kept under ``tmp_path``."""
    return Settings(
        remote=RemoteSettings(
            url=url, token=SecretStr(token) if token else None, state_dir=tmp_path / "state"
        ),
        http=HttpSettings(max_retries=0),
    )


def _laptop(tmp_path: Path, url: str, token: str | None = TOKEN) -> tuple[Settings, Engine]:
    """The settings and a SQLite store of their own."""
    _, engine = _store(tmp_path / "laptop.db")
    return _settings(tmp_path, url, token), engine


def _offers(engine: Engine) -> list[tuple[Any, ...]]:
    return sorted(
        (s.offer.key(), s.offer.price_per_hour, s.offer.currency, s.offer.gpu_count,
         s.offer.gpu_memory_gib, s.offer.vcpus, s.offer.memory_gib, s.offer.gpu_model,
         s.price_since, s.last_seen)
        for s in reads.current_offers(engine)
    )  # fmt: skip


def _services(engine: Engine) -> list[tuple[Any, ...]]:
    return [(p.price.key, p.price.price, p.price.currency) for p in service_prices(engine)]


def _counts(engine: Engine) -> dict[str, int]:
    tables = ("series", "price_points", "availability_points", "service_prices")
    with engine.connect() as conn:
        return {t: conn.execute(text(f"SELECT COUNT(*) FROM {t}")).scalar_one() for t in tables}


def _sync(settings: Settings, engine: Engine) -> tuple[Any, Any]:
    collector = RemoteCollector.from_settings(settings)
    offers = run_collector(engine, collector, settings)
    services = run_service_collector(engine, collector, settings)
    return offers, services


def test_a_laptop_store_matches_the_team_server_and_a_second_sync_is_a_304(
    team: tuple[str, Engine], tmp_path: Path, engine: Engine
) -> None:
    """The laptop's store on both engines (Postgres: exact numerics and timestamptz)."""
    url, server_engine = team
    settings, laptop = _settings(tmp_path, url), engine
    offers, services = _sync(settings, laptop)
    assert offers.ok and services.ok, (offers.error, services.error)
    assert offers.provider == "remote" and offers.source == "remote"

    copied = _offers(laptop)
    assert copied == _offers(server_engine)
    by_provider = {row[0][0]: row for row in copied}
    # worked out from team-sheet.csv: alpha changed 98.32 -> 96.50 on 2026-11-20 and was
    # seen again on 2026-11-25; each offer keeps its provider's own currency
    alpha = by_provider["alpha"]
    assert alpha[1:3] == (Decimal("96.5"), "USD")
    assert alpha[8:] == (
        datetime(2026, 11, 20, 10, tzinfo=UTC),
        datetime(2026, 11, 25, 10, tzinfo=UTC),
    )
    assert by_provider["beta"][1:3] == (Decimal("1.074"), "EUR")
    assert by_provider["beta"][0][3] == "eu-west-2a"  # the zone
    assert by_provider["gamma"][1:4] == (Decimal("0.315"), "SGD", Decimal("0.5"))
    assert sorted(by_provider) == ["alpha", "beta", "gamma"]
    # four tiers of team-services.csv, in USD and EUR
    assert _services(laptop) == _services(server_engine) and len(_services(laptop)) == 4

    before = _counts(laptop)
    # one series per offer; one interval each, the copy keeps only the current one
    assert before["series"] == 3 and before["price_points"] == 3 and before["service_prices"] == 4
    again_offers, again_services = _sync(settings, laptop)
    assert again_offers.status is RunStatus.SUCCEEDED, again_offers.error
    assert again_services.status is RunStatus.SUCCEEDED, again_services.error
    # the 304 is what marks a run unchanged; nothing was delisted or ended
    assert again_offers.skip_reasons == {"unchanged_at_source": 1}
    assert again_offers.stats.offers_seen == 0 and again_offers.stats.delisted == 0
    assert again_services.stats.offers_seen == 0 and again_services.stats.delisted == 0
    assert _counts(laptop) == before
    assert _offers(laptop) == copied and len(_services(laptop)) == 4


def test_the_saved_etag_is_the_servers_and_answers_304(
    team: tuple[str, Engine], tmp_path: Path
) -> None:
    url, _ = team
    settings, laptop = _laptop(tmp_path, url)
    collector = RemoteCollector.from_settings(settings)
    assert run_collector(laptop, collector, settings).ok
    etag = collector.state.etag(OFFERS_PATH, 3)
    assert etag is not None and etag.startswith('"')
    auth = {"Authorization": f"Bearer {TOKEN}"}
    first = httpx.get(url + OFFERS_PATH, headers=auth)
    assert first.status_code == 200 and first.headers["ETag"] == etag
    again = httpx.get(url + OFFERS_PATH, headers={**auth, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    # the store lost its copy (another count of listed offers): the ETag is not sent
    assert collector.state.etag(OFFERS_PATH, 0) is None
    laptop.dispose()


def test_a_wrong_token_fails_the_run_in_one_line(team: tuple[str, Engine], tmp_path: Path) -> None:
    url, _ = team
    settings, laptop = _laptop(tmp_path, url, token="not-the-token-0000")
    offers, services = _sync(settings, laptop)
    for summary in (offers, services):
        assert summary.status is RunStatus.FAILED
        assert summary.error is not None and "\n" not in summary.error
        assert "HTTP 401: the server's web token is wrong" in summary.error
        assert "GPU_TRACKER_REMOTE__TOKEN" in summary.error
        assert "not-the-token-0000" not in summary.error
    assert _counts(laptop)["series"] == 0
    settings = _settings(tmp_path / "none", url, token=None)
    offers = run_collector(laptop, RemoteCollector.from_settings(settings), settings)
    assert offers.error is not None and "web token is needed" in offers.error
    laptop.dispose()


def test_an_unreachable_server_is_a_failed_run_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings, laptop = _laptop(tmp_path, f"http://127.0.0.1:{port}")
    summary = run_collector(laptop, RemoteCollector.from_settings(settings), settings)
    assert summary.status is RunStatus.FAILED
    assert summary.error is not None and "\n" not in summary.error
    assert summary.error.startswith(
        "CollectorError: remote: team server unreachable: GET http://127.0.0.1:"
    )
    assert "ConnectError" in summary.error
    laptop.dispose()


def test_no_url_is_not_configured_and_the_environment_configures_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(NotConfigured, match="GPU_TRACKER_REMOTE__URL"):
        RemoteCollector.from_settings(Settings())
    token_file = tmp_path / "token"
    token_file.write_text("from-a-file-1234\n")
    monkeypatch.setenv("GPU_TRACKER_REMOTE__URL", "http://team:8080/")
    monkeypatch.setenv("GPU_TRACKER_REMOTE__TOKEN_FILE", str(token_file))
    settings = Settings()
    collector = RemoteCollector.from_settings(settings)
    assert collector.url == "http://team:8080"  # the trailing slash dropped
    assert collector.token is not None
    assert collector.token.get_secret_value() == "from-a-file-1234"
    assert "from-a-file-1234" not in repr(settings.remote)
    with pytest.raises(ValueError, match="expected http://host:port"):
        RemoteSettings(url="team:8080")


def test_a_row_that_is_not_an_offer_is_a_counted_skip(tmp_path: Path) -> None:
    ctx = RunContext(settings=Settings())
    good = {
        "provider": "alpha", "instance_type": "a.h100x8", "region": "us-east-1", "zone": "",
        "pricing": "on_demand", "payment_option": "", "offering_class": "", "os": "linux",
        "price_per_hour": "96.5", "currency": "USD", "gpu_model": "H100-SXM",
        "gpu_raw_name": "H100-SXM", "gpu_known": True, "gpu_count": "8",
        "gpu_memory_gib": "80", "vcpus": "192", "memory_gib": "2048",
        "interconnect": "unknown", "availability": "unknown", "attributes": {},
        "price_since": "2026-11-20T10:00:00Z", "last_seen": "2026-11-25T10:00:00Z",
    }  # fmt: skip
    first, last = parse_offer(good)
    assert first.observed_at == datetime(2026, 11, 20, 10, tzinfo=UTC)
    assert last.observed_at == datetime(2026, 11, 25, 10, tzinfo=UTC)
    assert len(parse_offer({**good, "last_seen": good["price_since"]})) == 1
    # A server of this release states the fabric; one of an earlier release sends neither
    # field, which reads as not stated (unknown, no bandwidth), never as a skip.
    assert first.fabric == "unknown" and first.network_gbps is None
    stated, _ = parse_offer({**good, "fabric": "infiniband", "network_gbps": "3200"})
    assert stated.fabric == "infiniband" and stated.network_gbps == 3200
    from collectors.base import parse_each

    rows = [{**good, "price_per_hour": "0"}, {k: v for k, v in good.items() if k != "currency"}]
    assert list(parse_each(rows, parse_offer, ctx.skip)) == []
    assert ctx.skips == {"invalid_row": 2}
    assert "alpha/a.h100x8/us-east-1: price_per_hour" in ctx.details[0]
    assert ctx.details[1] == "invalid_row: alpha/a.h100x8/us-east-1: currency: missing"


def test_collect_remote_from_the_cli_with_the_environment(
    team: tuple[str, Engine], tmp_path: Path
) -> None:
    """``gpu-tracker collect -p remote`` configured by GPU_TRACKER_REMOTE__URL / __TOKEN, its
    ETag kept under XDG_STATE_HOME: the second run is a 304 and changes nothing."""
    url, server_engine = team
    db, laptop = _store(tmp_path / "laptop.db")
    run = cli_runner(db, tmp_path)
    env = {"GPU_TRACKER_REMOTE__URL": url, "GPU_TRACKER_REMOTE__TOKEN": TOKEN}
    first = run("collect", "-p", "remote", extra_env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert _offers(laptop) == _offers(server_engine)
    assert list((tmp_path / "state" / "gpu-tracker").glob("remote-*.json"))
    before = _counts(laptop)
    second = run("collect", "-p", "remote", extra_env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert _counts(laptop) == before
    assert TOKEN not in first.stdout + first.stderr + second.stdout + second.stderr
    wrong = run(
        "collect", "-p", "remote", extra_env={**env, "GPU_TRACKER_REMOTE__TOKEN": "nope-0000"}
    )
    assert wrong.returncode != 0
    assert "the server's web token is wrong" in wrong.stdout + wrong.stderr
    laptop.dispose()


def test_what_the_server_delists_the_next_sync_delists(tmp_path: Path) -> None:
    """The server's sheet drops gamma's row: its complete run delists gamma, the ETag
    changes, and the laptop's next sync (a 200, not a 304) delists it too."""
    db, server_engine = _store(tmp_path / "server.db")
    sheet = tmp_path / "sheet.csv"
    rows = (FIXTURES / "team-sheet.csv").read_text().splitlines()
    sheet.write_text("\n".join(rows) + "\n")
    server_settings = Settings(database_url=db, pricesheet={"path": sheet})  # type: ignore[arg-type]
    collector = PriceSheetCollector.from_settings(server_settings)
    assert run_collector(server_engine, collector, server_settings, now=RUN_AT).ok
    server = serve(server_settings, server_engine)
    try:
        settings, laptop = _laptop(tmp_path, server.url, token=None)
        assert run_collector(laptop, RemoteCollector.from_settings(settings), settings).ok
        assert {row[0][0] for row in _offers(laptop)} == {"alpha", "beta", "gamma"}
        sheet.write_text("\n".join(r for r in rows if not r.startswith("gamma,")) + "\n")
        later = datetime(2026, 12, 2, 12, tzinfo=UTC)
        assert run_collector(server_engine, collector, server_settings, now=later).ok
        summary = run_collector(laptop, RemoteCollector.from_settings(settings), settings)
        assert summary.ok and summary.stats.delisted == 1, summary
        assert "unchanged_at_source" not in summary.skip_reasons
        assert _offers(laptop) == _offers(server_engine)
        assert {row[0][0] for row in _offers(laptop)} == {"alpha", "beta"}
    finally:
        server.stop()
        server_engine.dispose()
    laptop.dispose()
