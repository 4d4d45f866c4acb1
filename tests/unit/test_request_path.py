"""What the request path caches in Powertools' validation answers as Powertools itself would."""

import importlib

import pytest
from aws_lambda_powertools.event_handler.middlewares import openapi_validation
from aws_lambda_powertools.event_handler.openapi.dependant import is_scalar_field

from controlplane.http.routes import FUNCTIONS


def _parameters():
    for function in FUNCTIONS:
        app = importlib.import_module(f"{function}.handler").app
        for route in app._static_routes + app._dynamic_routes:
            dependant = route.dependant
            for field in dependant.query_params + dependant.header_params + dependant.path_params:
                yield pytest.param(field, id=f"{function} {route.method} {route.path} {field.name}")


def test_the_validation_middleware_asks_the_cached_question():
    # Powertools' middleware looks the question up by name in its own module: a rename or a move in
    # a Powertools upgrade would silently drop the cache, so this fails instead.
    assert openapi_validation.is_scalar_field is not is_scalar_field
    assert openapi_validation.is_scalar_field.__qualname__ == "_asked_once.<locals>.asked"


@pytest.mark.parametrize("field", list(_parameters()))
def test_each_parameter_gets_powertools_own_answer_every_time(field):
    # Given a parameter of a registered route, When asked twice (the second from the cache)
    first, second = openapi_validation.is_scalar_field(field), openapi_validation.is_scalar_field(field)

    # Then both are the answer Powertools computes
    assert first == second == is_scalar_field(field)
