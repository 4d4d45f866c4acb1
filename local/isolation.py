"""Who may do what: the route x caller matrix that both isolation suites assert, the handlers in
process (tests/handlers/test_authorization.py) and a deployment over HTTP (e2e/test_e2e_isolation.py).

Written out by hand, not derived from the route records: it is the specification they are held to.
Callers act in org A: an operator; A's admin; member alice of A on her own user and tickets, and on
member amy's; org B's admin; no token.
"""

CALLERS = ("operator", "admin_a", "member_a_own", "member_a_on_amy", "admin_b", "no_token")
#                                                   op   adminA own  >amy adminB none
EXPECTED = {
    ("POST", "/orgs"):                                 (201, 403, 403, 403, 403, 401),
    ("GET", "/orgs"):                                  (200, 403, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}"):                         (200, 200, 200, 200, 403, 401),
    ("PATCH", "/orgs/{org_id}"):                       (200, 200, 403, 403, 403, 401),
    ("DELETE", "/orgs/{org_id}"):                      (204, 403, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}/activity"):                (200, 200, 403, 403, 403, 401),
    ("GET", "/plans"):                                 (200, 200, 200, 200, 200, 401),
    ("POST", "/orgs/{org_id}/user-imports"):           (202, 202, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}/user-imports/{import_id}"): (200, 200, 403, 403, 403, 401),
    ("POST", "/orgs/{org_id}/users"):                  (201, 201, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}/users"):                   (200, 200, 200, 200, 403, 401),
    ("GET", "/orgs/{org_id}/users/{user_id}"):         (200, 200, 200, 403, 403, 401),
    ("PATCH", "/orgs/{org_id}/users/{user_id}"):       (200, 200, 200, 403, 403, 401),
    ("DELETE", "/orgs/{org_id}/users/{user_id}"):      (204, 204, 403, 403, 403, 401),
    ("POST", "/orgs/{org_id}/users/{user_id}/tickets"): (201, 201, 201, 403, 403, 401),
    ("GET", "/orgs/{org_id}/users/{user_id}/tickets"): (200, 200, 200, 403, 403, 401),
    ("GET", "/orgs/{org_id}/tickets/{ticket_id}"):     (200, 200, 200, 403, 403, 401),
    ("PATCH", "/orgs/{org_id}/tickets/{ticket_id}"):   (200, 200, 200, 403, 403, 401),
    ("DELETE", "/orgs/{org_id}/tickets/{ticket_id}"):  (204, 204, 204, 403, 403, 401),
    ("POST", "/orgs/{org_id}/units"):                  (201, 201, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}/units"):                   (200, 200, 200, 200, 403, 401),
    ("GET", "/orgs/{org_id}/units/{unit_id}"):         (200, 200, 200, 200, 403, 401),
    ("PATCH", "/orgs/{org_id}/units/{unit_id}"):       (200, 200, 403, 403, 403, 401),
    ("DELETE", "/orgs/{org_id}/units/{unit_id}"):      (204, 204, 403, 403, 403, 401),
    ("GET", "/orgs/{org_id}/units/{unit_id}/users"):   (200, 200, 200, 200, 403, 401),
}  # fmt: skip


def expected(route: tuple[str, str], caller: str) -> int:
    return EXPECTED[route][CALLERS.index(caller)]


# The suspended-org column: org A suspended. Once the authorizer's cache (AUTHORIZER_TTL_SECONDS,
# the stack's authorizer_ttl_seconds) has passed, A's admin and members get 403 org_suspended on
# every route, before any function runs; operators are unaffected. Reactivated, every cell is as above.
SUSPENDED_CALLERS = ("operator", "admin_a", "member_a_own")
SUSPENDED_CODE = "org_suspended"


# Operators keep every route, but a suspended org takes no new user (409 org_suspended, from the handler),
# nor an import of users.
SUSPENDED_OPERATOR = {("POST", "/orgs/{org_id}/users"): 409, ("POST", "/orgs/{org_id}/user-imports"): 409}


def expected_suspended(route: tuple[str, str], caller: str) -> int:
    if caller == "operator":
        return SUSPENDED_OPERATOR.get(route, expected(route, caller))
    return 403


# The time column: a token used (and its decision cached) just before a change is refused within
# REVOCATION_SECONDS after it, on every route, before any function runs: the change's lifecycle event
# flushes the authorizer's cache (functions/revocations; the local gateway's own), and the next decision
# reads the caller's item. Case -> (whose token, the route it calls, status and error code after): a
# token whose user or org is gone has its session ended (session_ended, on every route); a demoted
# admin is refused the routes of admins only (forbidden), from the item's new role.
REVOCATION_SECONDS = 5.0
REVOCATIONS = {
    "user deleted": ("member", ("GET", "/orgs/{org_id}/users"), 403, "session_ended"),
    "admin demoted": ("admin", ("GET", "/orgs/{org_id}/activity"), 403, "forbidden"),
    "user id deleted and re-created": (
        "member",
        ("GET", "/orgs/{org_id}/users/{user_id}/tickets"),
        403,
        "session_ended",
    ),
    "org id deleted and re-created": ("admin", ("GET", "/orgs/{org_id}/users"), 403, "session_ended"),
    "org suspended": ("member", ("GET", "/orgs/{org_id}"), 403, "org_suspended"),
}
# And back: a reactivated org's tokens are served again within the same bound.
REACTIVATED = ("member", ("GET", "/orgs/{org_id}"), 200)
