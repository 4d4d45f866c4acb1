"""Where the API is, and the rows of its route table the client sends, each as ``(method, path template)``.

Each row is looked up in ``controlplane.http.routes.ROUTES`` at import, so a route the table drops fails
here at once; ``COVERED`` is what a test compares with the table, so a route the client lacks fails too.
"""

from controlplane.http import routes

COVERED: set[tuple[str, str]] = set()


def api_url(explicit: str | None = None) -> str:
    """cpctl's API: ``explicit`` (--url, CONTROLPLANE_URL) if given, else the ``make run`` serving now,
    whatever its PORT (it says where in .local/api.json; ``local.running``), else http://127.0.0.1:3000."""
    from local import running  # the local kit's record, read only when no URL is given

    return running.api_url(explicit)


def _route(method: str, path: str) -> tuple[str, str]:
    """A row of the route table; fails at import if the table has no such route."""
    if not any(route.method == method and route.path == path for route in routes.ROUTES):
        raise LookupError(f"{method} {path} is not in controlplane.http.routes.ROUTES")
    COVERED.add((method, path))
    return method, path


POST_ORGS = _route("POST", "/orgs")
GET_ORGS = _route("GET", "/orgs")
GET_ORG = _route("GET", "/orgs/{org_id}")
PATCH_ORG = _route("PATCH", "/orgs/{org_id}")
DELETE_ORG = _route("DELETE", "/orgs/{org_id}")
GET_PLANS = _route("GET", "/plans")
GET_ACTIVITY = _route("GET", "/orgs/{org_id}/activity")
POST_USERS = _route("POST", "/orgs/{org_id}/users")
POST_USER_IMPORTS = _route("POST", "/orgs/{org_id}/user-imports")
GET_USER_IMPORT = _route("GET", "/orgs/{org_id}/user-imports/{import_id}")
GET_USERS = _route("GET", "/orgs/{org_id}/users")
GET_USER = _route("GET", "/orgs/{org_id}/users/{user_id}")
PATCH_USER = _route("PATCH", "/orgs/{org_id}/users/{user_id}")
DELETE_USER = _route("DELETE", "/orgs/{org_id}/users/{user_id}")
POST_TICKETS = _route("POST", "/orgs/{org_id}/users/{user_id}/tickets")
GET_TICKETS = _route("GET", "/orgs/{org_id}/users/{user_id}/tickets")
GET_TICKET = _route("GET", "/orgs/{org_id}/tickets/{ticket_id}")
PATCH_TICKET = _route("PATCH", "/orgs/{org_id}/tickets/{ticket_id}")
DELETE_TICKET = _route("DELETE", "/orgs/{org_id}/tickets/{ticket_id}")
POST_UNITS = _route("POST", "/orgs/{org_id}/units")
GET_UNITS = _route("GET", "/orgs/{org_id}/units")
GET_UNIT = _route("GET", "/orgs/{org_id}/units/{unit_id}")
PATCH_UNIT = _route("PATCH", "/orgs/{org_id}/units/{unit_id}")
DELETE_UNIT = _route("DELETE", "/orgs/{org_id}/units/{unit_id}")
GET_UNIT_USERS = _route("GET", "/orgs/{org_id}/units/{unit_id}/users")
