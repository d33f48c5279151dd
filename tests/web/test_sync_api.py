"""``/api/v1/sync/…``: what a team server hands the ``remote`` collector, behind the token,
with an ETag that a matching ``If-None-Match`` turns into a 304."""

from __future__ import annotations

from tests.web.conftest import TOKEN, Site
from tracker.web.sync_api import matches

ROUTES = ("/api/v1/sync/offers", "/api/v1/sync/service-prices")


def test_the_token_guards_the_sync_routes(locked_site: Site) -> None:
    for route in ROUTES:
        refused = locked_site.get(route)
        assert refused.status_code == 401
        assert refused.json() == {"error": "authentication required: send the web token"}
        wrong = locked_site.get(route, headers={"Authorization": "Bearer wrong-token-1"})
        assert wrong.status_code == 401
        ok = locked_site.get(route, headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and ok.headers["ETag"].startswith('"')


def test_the_rows_are_the_current_offers_exactly(site: Site) -> None:
    body = site.get("/api/v1/sync/offers").json()
    listed = site.get("/api/v1/offers").json()
    assert body["version"] == 1 and len(body["offers"]) == len(listed) > 0
    mine = {(r["provider"], r["instance_type"], r["region"], r["pricing"]) for r in body["offers"]}
    theirs = {(r["provider"], r["instance_type"], r["region"], r["pricing"]) for r in listed}
    assert mine == theirs
    for row in body["offers"]:
        assert isinstance(row["price_per_hour"], str)  # exact decimal text, never a float
        assert row["last_seen"].endswith("Z") and row["price_since"] <= row["last_seen"]


def test_a_matching_if_none_match_is_a_304_without_a_body(site: Site) -> None:
    for route in ROUTES:
        first = site.get(route)
        etag = first.headers["ETag"]
        assert site.get(route).headers["ETag"] == etag  # nothing changed: the same tag
        again = site.get(route, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["ETag"] == etag
        other = site.get(route, headers={"If-None-Match": '"something-else"'})
        assert other.status_code == 200 and other.json() == first.json()


def test_if_none_match_lists_weak_tags_and_star() -> None:
    assert matches('"b", W/"a"', '"a"')
    assert matches("*", '"a"')
    assert not matches('"ab"', '"a"')
    assert not matches(None, '"a"') and not matches("", '"a"')


def test_the_document_describes_the_sync_routes(site: Site) -> None:
    doc = site.get("/api/openapi.json").json()
    for route in ROUTES:
        op = doc["paths"][route]["get"]
        assert {"200", "304", "400", "503"} <= set(op["responses"])
        assert "ETag" in op["responses"]["200"]["headers"]
        header = next(p for p in op["parameters"] if p["in"] == "header")
        assert header["name"] == "If-None-Match"
    offers = doc["paths"]["/api/v1/sync/offers"]["get"]["responses"]["200"]
    schema = offers["content"]["application/json"]["schema"]
    assert "price_since" in schema["properties"]["offers"]["items"]["required"]
