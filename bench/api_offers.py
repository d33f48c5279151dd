"""/api/v1/offers beside the Offers page over 100,000 current offers (Postgres).

Builds SERIES series (default 100,000) with CHANGES price intervals each (default 2;
only the open ones are read) with bench/history.py's generator, then, against a real
uvicorn server on 127.0.0.1, times as the best of REPEAT requests each
  page_ms      GET /offers                   (the first page: 50 rows, rendered)
  api1_ms      GET /api/v1/offers?limit=1
  api100_ms    GET /api/v1/offers?limit=100
  deep_ms      GET /api/v1/offers?limit=100&offset=50000  (a page in the middle)
and, in the same run, the read the route made before issue 44 (every matching offer
read, converted and sorted in Python, then cut: ``offer_rows(..., limit=1)``, what the
CLI's ``offers`` still does) as ``whole_ms``. Target: the API within 2× the page.

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        python bench/api_offers.py [--series 100000] [--changes 2] [--repeat 5]

Last line: ``api_offers page_ms=… api1_ms=… api100_ms=… deep_ms=… whole_ms=…
ratio1=… ratio100=…`` (ratios: the API's time over the page's).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.history import build  # the same data as bench/history.py and bench/web.py
from bench.scratch_db import scratch_database
from bench.web import best, page
from tracker.service.web import WebServer
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import Engine, make_engine
from tracker.views.currency import load_view
from tracker.views.offers import offer_rows
from tracker.web import WebContext, create_app


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--series", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with scratch_database() as url:
        engine = make_engine(url)
        try:
            run(engine, url, args)
        finally:
            engine.dispose()


def run(engine: Engine, url: str, args: argparse.Namespace) -> None:
    migrate.upgrade(engine)
    started = time.perf_counter()
    build(engine, args.series, args.changes)
    print(f"built {args.series:,} series × {args.changes} intervals in "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    settings = Settings(database_url=url)
    server = WebServer("127.0.0.1:0", create_app(WebContext(settings, engine)))
    server.start()
    try:
        page_s, html = best(page(f"{server.url}/offers"), args.repeat)
        assert f"{args.series:,}".replace(",", "") in html.replace(",", "")
        api1_s, body = best(page(f"{server.url}/api/v1/offers?limit=1"), args.repeat)
        assert body.count('"provider"') == 1
        api100_s, body = best(page(f"{server.url}/api/v1/offers?limit=100"), args.repeat)
        assert body.count('"provider"') == 100
        deep = f"{server.url}/api/v1/offers?limit=100&offset={args.series // 2}"
        deep_s, body = best(page(deep), args.repeat)
        assert body.count('"provider"') == 100
    finally:
        server.stop()
    view = load_view(engine, settings)
    whole_s, rows = best(lambda: offer_rows(engine, view, limit=1), max(1, args.repeat // 2))
    assert len(rows) == 1
    ms = {k: v * 1000 for k, v in (("page", page_s), ("api1", api1_s), ("api100", api100_s),
                                    ("deep", deep_s), ("whole", whole_s))}  # fmt: skip
    print(f"offers page (first of {args.series // 50:,} pages): {ms['page']:.0f} ms")
    print(f"/api/v1/offers?limit=1: {ms['api1']:.0f} ms; limit=100: {ms['api100']:.0f} ms; "
          f"limit=100 at offset {args.series // 2:,}: {ms['deep']:.0f} ms")  # fmt: skip
    print(f"the route's read before (every offer sorted in Python): {ms['whole']:.0f} ms")
    print(
        f"api_offers page_ms={ms['page']:.0f} api1_ms={ms['api1']:.0f} "
        f"api100_ms={ms['api100']:.0f} deep_ms={ms['deep']:.0f} whole_ms={ms['whole']:.0f} "
        f"ratio1={api1_s / page_s:.2f} ratio100={api100_s / page_s:.2f}"
    )


if __name__ == "__main__":
    main()
