"""Where a warm GET's own Python time goes, step by step: section 2's handler overhead taken apart.

DynamoDB answers from a recording: a ``before-call`` hook on the functions' client returns the
response it parsed the first time, so botocore still validates and serializes the request but
neither signs, sends nor parses. Each step is the difference of two nested calls, each timed as the
fastest of many batches (noise only adds):

- the local gateway: ``local.apigw.invoke`` less the ``lambda_handler`` it calls (in the cloud, API
  Gateway's and the Lambda runtime's, not the function's);
- the decorators and the admission: ``lambda_handler`` (the logger's, tracer's and metrics'
  decorators, admission, the media-type check) less Powertools' ``resolve``;
- Powertools' resolver: ``resolve`` (the event's wrapper, routing, the middleware frames, request
  validation, response validation and serialization, the JSON dump, the headers) less the route's
  function;
- the route function: the logic, the decoding of the items, the models, less botocore's part;
- botocore's part: the recorded call replayed on the same client, which the bare call pays too.
"""

import importlib
import timeit
from contextlib import contextmanager

from aws_lambda_powertools.event_handler.api_gateway import BaseRouter
from botocore import xform_name

from bench import data, harness, overhead
from bench.stats import markdown
from controlplane import config
from controlplane.http import routes
from controlplane.http.auth import authorizer_context
from controlplane.http.entry import admit
from local import apigw

STEPS = ("the local gateway", "decorators, admission", "Powertools' resolver", "the route function")
# botocore's validation and serialization of the request (with the recording: no signing, no wire, no
# parsing): the bare call's too, so not overhead.
SHARED = "botocore, as the bare call"


@contextmanager
def recorded_dynamodb():
    """The functions' DynamoDB client answers each request as it did the first time it was asked."""
    client, answers, asked = config.dynamodb(), {}, []

    def before_call(model, params, **_):
        asked[:] = [(model.name, params["body"])]  # the request as serialized: the same body, the same answer
        return answers.get(asked[0])

    def after_call(http_response, parsed, **_):
        answers.setdefault(asked[0], (http_response, parsed))

    client.meta.events.register("before-call.dynamodb", before_call)
    client.meta.events.register("after-call.dynamodb", after_call)
    try:
        yield
    finally:
        client.meta.events.unregister("before-call.dynamodb", before_call)
        client.meta.events.unregister("after-call.dynamodb", after_call)


def _fastest(calls: dict, number: int, rounds: int = 30) -> dict[str, float]:
    """µs per call of each callable: the fastest of ``rounds`` batches of ``number`` calls, the
    callables taking turns so that the machine's noise falls on all of them alike."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, call in calls.items():
            best[name] = min(best[name], timeit.timeit(call, number=number) / number * 1e6)
    return best


def split(request: dict, number: int) -> list[float]:
    """µs per call of each of STEPS, and the whole, for one API Gateway event."""
    route = routes.find(request["httpMethod"], request["resource"])
    assert route is not None
    module = importlib.import_module(f"{route.function}.handler")
    app, context = module.app, apigw.LambdaContext(route.function)
    caller = admit(route, authorizer_context(request), request["pathParameters"] or {})
    registered = next(r for r in app._static_routes + app._dynamic_routes if r.operation_id == route.operation_id)
    arguments = {**(request["pathParameters"] or {}), **(request["queryStringParameters"] or {})}
    with harness.recording(config.dynamodb()) as recorder:
        apigw.invoke(request)
    [exchange] = recorder.exchanges  # one DynamoDB call, answered from the recording
    bare = harness.replay(config.dynamodb(), xform_name(exchange.operation), exchange.params)

    def resolve():
        app.append_context(route=route, caller=caller)
        return app.resolve(request, context)

    def route_function():
        # As the resolver leaves things for it: the event, the admitted caller and its route in place.
        app.append_context(route=route, caller=caller, _route=registered)
        BaseRouter.current_event = app._to_proxy_event(request)
        BaseRouter.lambda_context = context
        return registered.func(**arguments)

    calls = {
        "whole": lambda: apigw.invoke(request),
        "handler": lambda: module.lambda_handler(request, context),
        "resolve": resolve,
        "function": route_function,
        "bare": bare,
    }
    t = _fastest(calls, number)
    steps = [t["whole"] - t["handler"], t["handler"] - t["resolve"], t["resolve"] - t["function"]]
    return [*steps, t["function"] - t["bare"], t["bare"], t["whole"] - t["bare"]]


# What issue 28 cut from the request path, each measured by itself when it was cut (µs per request,
# on the machine of the report), and what remains and why. The table above measures today's steps.
FINDINGS = """\
What was cut (issue 28), each measured alone when it was cut:

- **Admission once, the route record found once** (with the layers' work). The entry point admits
  the caller, checks the path's ids and finds the route record, then hands both to the resolver's
  context; the route function reads them there (`Resolver.caller`, `Resolver.route_record`,
  `created`). Nothing is looked up twice.
- **The correlation id** is read from `requestContext.requestId` in the entry point instead of through
  the logger's `correlation_id_path`, a JMESPath search per request: ~8 µs.
- **Powertools' request validation asks each query parameter, on each request, whether its annotation is
  a scalar** (a walk of typing's generics). `http/resolver.py` answers once per parameter: ~10 µs on
  the six routes with query parameters.
- **A key's strings go to DynamoDB's wire format inline** (`dal/codec.to_dynamo`), not through
  TypeSerializer's type probes: ~5 µs a key.
- **A page is validated as one model** (`TicketPage.model_validate({...})`), not one `model_validate`
  call per item: ~13 µs for 20 tickets.
- **The local gateway** (API Gateway's part in the cloud, not the function's) matches a path against
  the routes of its method and segment count only, their templates split once: ~5 µs.

What remains, and why it stays:

- **The decorators.** Timed alone: Powertools' tracer, ~8 µs, which opens an X-Ray subsegment per
  request even with tracing disabled, as here (a dummy one; in Lambda a real one costs more); the
  logger's Lambda context, ~7 µs; the metrics flush, ~2 µs; admission, ~3 µs. The rest of the step's
  figure is running them inside a request rather than alone. They are the observability every function
  carries, and admission is the security.
- **Powertools' resolver**, ~50 µs for one item and ~85-115 µs for a page of 20: routing, three
  middleware frames, request validation (path, query, headers, cookies), validation and serialization
  of the return type, `json.dumps`, the headers. It is what validates input and documents the API
  (OpenAPI from the same types); going below it would mean a resolver of our own.
- **The route function beyond botocore**: the items decoded and validated, ~3 µs an item.
- **botocore** validates, serializes, signs and parses the request in the function as in the bare
  call: shared, so not overhead (the table's botocore column is its validation and serialization only).
"""


def run(client, number: int = 20) -> str:
    """The steps' table for every read route of section 2, and the findings."""
    users = {overhead.USER: overhead.TICKETS, **{f"user-{i:02}": 0 for i in range(overhead.USERS - 1)}}
    ids = {"org_id": overhead.ORG, "user_id": overhead.USER}
    ids["ticket_id"] = data.seed(client, overhead.ORG, users)[overhead.USER][0]
    rows = []
    with recorded_dynamodb():
        for path, query in overhead.READS:
            request = harness.event("GET", path.format(**ids), query=query)
            for _ in range(number):
                apigw.invoke(request)
            rows.append([harness.label("GET", path, query), *(f"{us:.0f}" for us in split(request, number))])
    intro = (
        f"Section 2's overhead step by step (`bench/steps.py`): µs per call, the fastest of 30 batches of {number}, "
        "the steps taking turns, with DynamoDB answered from a recording (botocore validates and serializes "
        "the request; nothing is signed, sent or parsed). "
        "Each step is the difference of two nested calls; the last column is the function's own Python, "
        "what section 2's overhead is made of.\n\n"
    )
    return intro + markdown(["Route", *STEPS, SHARED, "all but botocore"], rows) + "\n\n" + FINDINGS
