"""The route table is the API's one definition: each handler serves exactly its rows."""

import importlib

import pytest

from controlplane.routes import FUNCTIONS, ROUTES


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
