"""The events/ folder: one API Gateway REST proxy event per route, for ``sam local invoke -e``,
and the ``--env-vars`` file that points the functions at DynamoDB Local.

Generated from the route table by ``local.apigw.build_event``; ``make events`` rewrites them, and a
test fails when the committed files differ from what this module would write.
"""

import json
from pathlib import Path

from controlplane.http.routes import ROUTES, Route
from local import ROOT, tokens
from local.apigw import OPERATOR_CONTEXT, build_event
from local.environment import LOCAL
from local.samples import BODIES

EVENTS_DIR = ROOT / "events"
ENV_FILE = EVENTS_DIR / "env.json"
# What BODIES create (the ticket and the user import with these ids, where a test fixes them).
IDS = {
    "org_id": "newco",
    "user_id": "carol",
    "ticket_id": "01JD3Q0Z6V7S3M8E2K9XWQY4PB",
    "import_id": "01JD3Q0Z6V7S3M8E2K9XWQY4PC",
    "unit_id": "sales",
}
# sam local invoke runs the function in a container: the host is host.docker.internal there.
SAM_ENV = {
    **{name: value for name, value in LOCAL.items() if not name.startswith("AWS_")},  # sam sets those
    "AWS_ENDPOINT_URL_DYNAMODB": "http://host.docker.internal:8000",
    # Empty values switch off what the deployed stack wires in: Secrets Manager (CURSOR_SECRET is used
    # instead), Cognito sign-ins and the deletions queue (as in make run).
    "CURSOR_SECRET_ARN": "",
    "USER_POOL_ID": "",
    "DELETIONS_QUEUE_URL": "",
    # The authorizer trusts make run's tokens: its JWKS, on the host.
    **tokens.environment(f"http://host.docker.internal:3000{tokens.JWKS_PATH}"),
}
FIXED_TIME = {"requestTime": "21/Nov/2026:12:00:00 +0000", "requestTimeEpoch": 1795262400000}


def file_for(route: Route) -> Path:
    """``events/<function>/<method>_<path>.json``, e.g. events/tickets/get_orgs_org_id_tickets_ticket_id.json."""
    words = [segment.strip("{}") for segment in route.path.strip("/").split("/")]
    return EVENTS_DIR / route.function / f"{route.method.lower()}_{'_'.join(words)}.json"


def event_for(route: Route) -> dict:
    body = BODIES.get((route.method, route.path))
    headers = {"Accept": ["application/json"], "Host": ["localhost"]}
    if body is not None:
        headers["Content-Type"] = ["application/json"]
    event = build_event(
        route.method,
        route.path.format(**IDS),
        headers=headers,
        body=json.dumps(body) if body is not None else None,
        request_id=f"sam-local-{file_for(route).stem}",
        authorizer=OPERATOR_CONTEXT,
    )
    event["requestContext"].update(FIXED_TIME)  # stable files: regenerating changes nothing
    return event


def render(document: dict) -> str:
    return json.dumps(document, indent=2) + "\n"


def expected_files() -> dict[Path, str]:
    files = {file_for(route): render(event_for(route)) for route in ROUTES}
    files[ENV_FILE] = render({"Parameters": SAM_ENV})
    return files


def main() -> None:
    for path, text in expected_files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
