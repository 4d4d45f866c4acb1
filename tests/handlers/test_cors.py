"""CORS on the functions' own responses, when origins are configured (API Gateway does the preflight)."""

import pytest

from controlplane.http.resolver import Resolver
from local.apigw import LambdaContext, build_event


@pytest.fixture
def app(monkeypatch):
    monkeypatch.setenv("CORS_ALLOW_ORIGINS", "https://app.example.com,https://admin.example.com")
    app = Resolver()
    app.get("/ping")(lambda: {"ok": True})
    return app


def _get(app, origin: str | None) -> dict:
    event = build_event("GET", "/ping", headers={"Origin": [origin]} if origin else {})
    event["requestContext"]["authorizer"] = {"sub": "someone"}
    response = app.resolve(event, LambdaContext(function_name="test"))
    return {name: values[-1] for name, values in response["multiValueHeaders"].items()}


@pytest.mark.parametrize("origin", ["https://app.example.com", "https://admin.example.com"])
def test_a_configured_origin_may_read_the_response_and_its_etag(app, origin):
    headers = _get(app, origin)

    assert headers["Access-Control-Allow-Origin"] == origin
    assert "ETag" in headers["Access-Control-Expose-Headers"]


def test_a_configured_origin_may_read_the_location_and_retry_after_too(app):
    # docs/API.md: ETag, Location and Retry-After are exposed; a console that cannot read a 503's or a
    # 409 move_in_progress's Retry-After, or a create's Location, has to guess
    exposed = {
        name.strip() for name in _get(app, "https://app.example.com")["Access-Control-Expose-Headers"].split(",")
    }

    assert exposed >= {"ETag", "Location", "Retry-After"}


def test_another_origin_is_not_named(app):
    assert "Access-Control-Allow-Origin" not in _get(app, "https://evil.example.com")


def test_no_configured_origins_means_no_cors_headers(monkeypatch):
    monkeypatch.delenv("CORS_ALLOW_ORIGINS", raising=False)
    app = Resolver()
    app.get("/ping")(lambda: {"ok": True})

    assert "Access-Control-Allow-Origin" not in _get(app, "https://app.example.com")


def test_a_refusal_of_the_entry_point_names_a_configured_origin_too(app):
    # Given a request with no caller, refused before the resolver runs
    event = build_event("GET", "/orgs/acme", headers={"Origin": ["https://admin.example.com"]})
    event["requestContext"].pop("authorizer", None)

    # When the entry point answers it
    response = app.entry_point()(event, LambdaContext(function_name="test"))

    # Then a browser on that origin may read the 401's body
    headers = {name: values[-1] for name, values in response["multiValueHeaders"].items()}
    assert response["statusCode"] == 401
    assert headers["Access-Control-Allow-Origin"] == "https://admin.example.com"
