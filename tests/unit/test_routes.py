"""The route table is the API's one definition: each handler serves exactly its rows."""

import importlib

import pytest

from controlplane.http.docs import error_statuses
from controlplane.http.routes import FUNCTIONS, ROUTES
from local import openapi


def _served(function: str) -> set[tuple[str, str]]:
    app = importlib.import_module(f"{function}.handler").app
    schema = app.get_openapi_schema()
    return {
        (method.upper(), path) for path, item in schema.paths.items() for method in item.model_dump(exclude_none=True)
    }


@pytest.mark.parametrize("function", FUNCTIONS)
def test_handler_serves_exactly_the_routes_the_table_gives_it(function):
    expected = {(r.method, r.path) for r in ROUTES if r.function == function}

    assert _served(function) == expected


def test_route_table_has_no_duplicates():
    assert len({(r.method, r.path) for r in ROUTES}) == len(ROUTES)


def test_the_committed_openapi_document_is_the_codes():
    assert openapi.COMMITTED.read_text() == openapi.render(), "docs/openapi.json is stale: python -m local.openapi"


@pytest.mark.parametrize("route", ROUTES, ids=str)
def test_each_operation_is_named_and_documents_only_its_own_errors(route):
    operation = openapi.document()["paths"][route.path][route.method.lower()]

    assert operation["operationId"] == route.operation_id
    assert operation["summary"] == route.summary
    documented = {int(status) for status in operation["responses"]}
    assert documented == set(route.successes) | error_statuses(route)
    assert 405 not in documented
    if route.status == 204:
        assert "content" not in operation["responses"]["204"]
    if route.status == 201:
        assert {"Location", "ETag"} <= set(operation["responses"]["201"]["headers"])
