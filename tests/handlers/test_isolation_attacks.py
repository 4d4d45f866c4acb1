"""Attacks on who may do what, beyond the route x caller matrix (test_authorization.py): another
org's ids guessed on one's own org's paths, another org's ids in a body, roles no one may grant,
contexts and methods no rule knows, ids that look like another org's. Each answers 4xx, reads or
writes nothing of the other org, and leaks nothing of it."""

import json

import pytest

from controlplane import config
from controlplane.http.routes import ROUTES
from tests.api import OPERATOR, admin, call, create_org, create_ticket, create_user, member

ADMIN_A, MEMBER_A = admin("acme", "root"), member("acme", "alice")
# What only bolt holds: a unit and a user of that name exist in bolt alone.
BOLT_UNIT, BOLT_USER, BOLT_SECRET = "vault", "keeper", "bolt secret"


@pytest.fixture
def orgs(table):
    """acme (admin root, member alice, unit eng) and bolt (admin bob; unit vault with user keeper,
    who has a ticket; a user import): the ids of bolt's ticket and import."""
    for org_id in ("acme", "bolt"):
        create_org(org_id)
        call("POST", f"/orgs/{org_id}/units", {"unit_id": "eng", "name": "Eng"})
    create_user("acme", "root", role="admin")
    create_user("acme", "alice")
    create_user("bolt", "bob", role="admin")
    call("POST", "/orgs/bolt/units", {"unit_id": BOLT_UNIT, "name": BOLT_SECRET})
    create_user("bolt", BOLT_USER, unit=BOLT_UNIT, name=BOLT_SECRET)
    ticket = create_ticket("bolt", BOLT_USER, subject=BOLT_SECRET).body["ticket_id"]
    rows = [{"user_id": "bea", "name": BOLT_SECRET, "email": "bea@example.com"}]
    job = call("POST", "/orgs/bolt/user-imports", {"rows": rows}).body["import_id"]
    return {"ticket_id": ticket, "import_id": job}


def _partition_items(prefix: str) -> list[dict]:
    """Every item whose partition key starts with ``prefix``, in a stable order."""
    items = config.dynamodb().scan(TableName=config.settings().table_name)["Items"]
    return sorted((item for item in items if item["PK"]["S"].startswith(prefix)), key=json.dumps)


def _leaks_nothing_of_bolt(reply) -> None:
    """Neither bolt's id nor what only bolt's items hold (an id the caller sent may be echoed)."""
    text = json.dumps(reply.body)
    assert "bolt" not in text and BOLT_SECRET not in text, text


# Another org's ids guessed on one's own org's paths: every key starts with the path's org, so they
# name nothing there (404), and the other org is unchanged.


def _guesses(orgs: dict) -> list[tuple[str, str, dict | None, dict]]:
    ticket, job = orgs["ticket_id"], orgs["import_id"]
    return [
        ("GET", f"/orgs/acme/tickets/{ticket}", None, {}),
        ("PATCH", f"/orgs/acme/tickets/{ticket}", {"status": "closed"}, {}),
        ("DELETE", f"/orgs/acme/tickets/{ticket}", None, {}),
        ("GET", f"/orgs/acme/user-imports/{job}", None, {}),
        ("GET", f"/orgs/acme/users/{BOLT_USER}", None, {}),
        ("GET", f"/orgs/acme/users/{BOLT_USER}", None, {"query": {"include": "tickets"}}),
        ("PATCH", f"/orgs/acme/users/{BOLT_USER}", {"name": "Mine"}, {}),
        ("DELETE", f"/orgs/acme/users/{BOLT_USER}", None, {}),
        ("GET", f"/orgs/acme/users/{BOLT_USER}/tickets", None, {}),
        ("POST", f"/orgs/acme/users/{BOLT_USER}/tickets", {"subject": "Mine"}, {}),
        ("GET", f"/orgs/acme/units/{BOLT_UNIT}", None, {}),
        ("PATCH", f"/orgs/acme/units/{BOLT_UNIT}", {"name": "Mine"}, {}),
        ("DELETE", f"/orgs/acme/units/{BOLT_UNIT}", None, {}),
        ("GET", f"/orgs/acme/units/{BOLT_UNIT}/users", None, {}),
        ("GET", "/orgs/acme/units", None, {"query": {"under": BOLT_UNIT}}),
    ]


GUESSES = [
    "GET ticket",
    "PATCH ticket",
    "DELETE ticket",
    "GET import",
    "GET user",
    "GET user with tickets",
    "PATCH user",
    "DELETE user",
    "GET user's tickets",
    "POST user's ticket",
    "GET unit",
    "PATCH unit",
    "DELETE unit",
    "GET unit's users",
    "GET units under",
]


@pytest.mark.parametrize("guess", range(len(GUESSES)), ids=GUESSES)
def test_another_orgs_ids_on_ones_own_orgs_paths_are_404_and_leave_it_unchanged(orgs, guess):
    method, path, body, options = _guesses(orgs)[guess]
    bolt_before = _partition_items("ORG#bolt")

    reply = call(method, path, body, caller=ADMIN_A, **options)

    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body
    _leaks_nothing_of_bolt(reply)
    assert _partition_items("ORG#bolt") == bolt_before


def test_a_member_guessing_another_orgs_ticket_id_gets_404(orgs):
    reply = call("GET", f"/orgs/acme/tickets/{orgs['ticket_id']}", caller=MEMBER_A)

    assert reply.status == 404
    _leaks_nothing_of_bolt(reply)


# Another org's ids inside a body: the unit a user goes to, a unit's parent, an import's rows. They
# are looked up under the path's org only.


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        (
            "POST",
            "/orgs/acme/users",
            {"user_id": "carol", "name": "Carol", "email": "c@example.com", "unit": BOLT_UNIT},
        ),
        ("PATCH", "/orgs/acme/users/alice", {"unit": BOLT_UNIT}),
        ("POST", "/orgs/acme/units", {"unit_id": "sales", "name": "Sales", "parent_id": BOLT_UNIT}),
        ("PATCH", "/orgs/acme/units/eng", {"parent_id": BOLT_UNIT}),
    ],
    ids=["user created in it", "user moved into it", "unit created under it", "unit moved under it"],
)
def test_another_orgs_unit_named_in_a_body_is_404_and_nothing_moves(orgs, method, path, body):
    acme_before, bolt_before = _partition_items("ORG#acme"), _partition_items("ORG#bolt")

    reply = call(method, path, body, caller=ADMIN_A)

    assert (reply.status, reply.error_code) == (404, "not_found"), reply.body
    assert reply.body["error"]["message"] == f"Unit {BOLT_UNIT} not found in organization acme"
    assert _partition_items("ORG#acme") == acme_before
    assert _partition_items("ORG#bolt") == bolt_before


def test_import_rows_naming_another_orgs_unit_org_or_user_id_touch_only_acme(orgs):
    bolt_before = _partition_items("ORG#bolt")
    rows = [
        {"user_id": "cy", "name": "Cy", "email": "cy@example.com", "unit": BOLT_UNIT},
        {"user_id": "di", "name": "Di", "email": "di@example.com", "org_id": "bolt"},
        {"user_id": "ed", "name": "Ed", "email": "ed@example.com"},
        {"user_id": "bob", "name": "Bob", "email": "bob@example.com"},  # bolt's admin's id: acme's own bob
    ]

    reply = call("POST", "/orgs/acme/user-imports", {"rows": rows}, caller=ADMIN_A)

    assert reply.status == 202
    assert [(r["row"], r["code"]) for r in reply.body["refused"]] == [(0, "not_found"), (1, "validation_error")]
    assert reply.body["created"] == 2
    assert call("GET", "/orgs/acme/users/ed").status == 200
    assert call("GET", "/orgs/acme/users/bob").body["role"] == "member"
    assert call("GET", "/orgs/bolt/users/di").status == 404
    assert _partition_items("ORG#bolt") == bolt_before


@pytest.mark.parametrize(
    "route", [r for r in ROUTES if r.method in ("POST", "PATCH") and "{org_id}" in r.path], ids=str
)
def test_an_org_id_or_a_key_smuggled_into_a_body_is_422_and_writes_nothing(orgs, dynamodb_calls, route):
    from local.samples import BODIES

    ids = {"org_id": "acme", "user_id": "alice", "unit_id": "eng", "ticket_id": orgs["ticket_id"]}
    path = route.path.format(**ids)
    body = BODIES[(route.method, route.path)]
    if route.operation_id == "importUsers":
        attack = {**body, "org_id": "bolt"}
    else:
        attack = {**body, "org_id": "bolt", "PK": "ORG#bolt"}
    dynamodb_calls.clear()

    reply = call(route.method, path, attack, caller=OPERATOR)

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert not {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"} & set(dynamodb_calls)


def test_a_ticket_body_naming_another_owner_is_422(orgs):
    body = {"subject": "As root", "user_id": "root"}

    reply = call("POST", "/orgs/acme/users/alice/tickets", body, caller=MEMBER_A)

    assert (reply.status, reply.error_code) == (422, "validation_error")
    assert call("GET", "/orgs/acme/users/root/tickets").body["items"] == []


# Escalation: no role beyond admin and member exists to grant; a member's own PATCH is all or nothing.


@pytest.mark.parametrize("role", ["operator", "operators", "Admin", "owner"])
def test_an_admin_cannot_grant_a_role_that_does_not_exist(orgs, role):
    patched = call("PATCH", "/orgs/acme/users/alice", {"role": role}, caller=ADMIN_A)
    created = create_user("acme", "carol", caller=ADMIN_A, role=role)
    rows = [{"user_id": "dee", "name": "Dee", "email": "dee@example.com", "role": role}]
    imported = call("POST", "/orgs/acme/user-imports", {"rows": rows}, caller=ADMIN_A)

    assert (patched.status, created.status) == (422, 422)
    assert [r["code"] for r in imported.body["refused"]] == ["validation_error"]
    assert call("GET", "/orgs/acme/users/alice").body["role"] == "member"
    assert call("GET", "/orgs/acme/users/carol").status == 404
    assert call("GET", "/orgs/acme/users/dee").status == 404


@pytest.mark.parametrize("field", [{"role": "admin"}, {"unit": "eng"}, {"email": "a@elsewhere.example"}])
def test_a_members_own_patch_with_a_forbidden_field_changes_nothing_else(orgs, dynamodb_calls, field):
    before = call("GET", "/orgs/acme/users/alice").body
    dynamodb_calls.clear()

    reply = call("PATCH", "/orgs/acme/users/alice", {"name": "Al", **field}, caller=MEMBER_A)

    assert (reply.status, reply.error_code) == (403, "forbidden")
    assert dynamodb_calls == []
    assert call("GET", "/orgs/acme/users/alice").body == before


def test_a_member_cannot_open_a_ticket_as_their_admin_through_their_own_path(orgs, dynamodb_calls):
    dynamodb_calls.clear()

    reply = call("POST", "/orgs/acme/users/root/tickets", {"subject": "As root"}, caller=MEMBER_A)

    assert reply.status == 403
    assert dynamodb_calls == []


# Fail closed on the context: a role no rule knows is refused before any read.


@pytest.mark.parametrize("role", ["owner", "Admin", "operator", "operators", " admin", "admin,member"])
def test_a_context_with_a_role_no_rule_knows_is_403_before_any_read(orgs, dynamodb_calls, role):
    dynamodb_calls.clear()

    reply = call("GET", "/orgs/acme/users", caller={**MEMBER_A, "role": role})

    assert (reply.status, reply.error_code) == (403, "forbidden")
    assert dynamodb_calls == []


def test_a_tenant_context_naming_a_group_that_is_not_operators_is_still_a_tenant(orgs, dynamodb_calls):
    dynamodb_calls.clear()

    reply = call("GET", "/orgs", caller={**ADMIN_A, "groups": "Operators,operator,admins"})

    assert (reply.status, reply.error_code) == (403, "forbidden")
    assert dynamodb_calls == []


# Methods no route lists, on every path of the table: 405 with the methods there are, for every caller,
# before any read.

_EVERY_METHOD = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "get")
_CONCRETE = {"org_id": "acme", "user_id": "alice", "unit_id": "eng", "ticket_id": "01JD3Q0Z6V7S3M8E2K9XWQY4PB"}
_UNLISTED = [
    pytest.param(method, path, id=f"{method} {path}")
    for path in sorted({r.path for r in ROUTES})
    for method in _EVERY_METHOD
    if (method, path) not in {(r.method, r.path) for r in ROUTES}
]


@pytest.mark.parametrize("table", ["moto"], indirect=True)  # refused before any request: one backend is enough
@pytest.mark.parametrize("caller", [None, MEMBER_A, ADMIN_A, OPERATOR], ids=["no-token", "member", "admin", "operator"])
@pytest.mark.parametrize(("method", "path"), _UNLISTED)
def test_a_method_no_route_lists_is_405_for_every_caller_before_any_read(table, dynamodb_calls, caller, method, path):
    concrete = path.format(**_CONCRETE, import_id=_CONCRETE["ticket_id"])
    listed = sorted(r.method for r in ROUTES if r.path == path)
    dynamodb_calls.clear()

    reply = call(method, concrete, {"name": "x"}, caller=caller)

    assert (reply.status, reply.error_code) == (405, "method_not_allowed"), reply.body
    assert sorted(m.strip() for m in reply.headers["Allow"].split(",")) == listed
    assert dynamodb_calls == []


# Query parameters the document does not list are refused before anything is read: they cannot
# steer a read into another org.


@pytest.mark.parametrize(
    "path",
    ["/orgs/acme", "/orgs/acme/users", "/orgs/acme/units", "/orgs/acme/units/eng/users", "/orgs/acme/users/alice"],
)
def test_undocumented_query_parameters_do_not_steer_a_read_into_another_org(orgs, dynamodb_calls, path):
    query = {"org_id": "bolt", "user_id": BOLT_USER, "unit_id": BOLT_UNIT, "PK": "ORG#bolt", "org": "bolt"}
    dynamodb_calls.clear()

    reply = call("GET", path, caller=MEMBER_A if path.endswith("alice") else ADMIN_A, query=query)

    assert (reply.status, reply.error_code) == (422, "validation_error"), reply.body
    assert sorted(detail["loc"][1] for detail in reply.body["error"]["details"]) == sorted(query)
    assert dynamodb_calls == []
    _leaks_nothing_of_bolt(reply)


# Ids that decode to, or look like, an org: the rule is applied to the id the function then uses.


@pytest.mark.parametrize(
    "org_id",
    ["%62olt", "b%6Flt", "%62%6F%6C%74", "bolt%00", "bolt%0A", "%D0%B0cme", "\u0430cme", "acme%2F..%2Fbolt"],
    ids=["percent-b", "percent-o", "all-percent", "nul", "newline", "cyrillic-a-encoded", "cyrillic-a", "dot-dot"],
)
def test_an_org_id_encoded_or_looking_like_another_is_refused_before_any_read(orgs, dynamodb_calls, org_id):
    dynamodb_calls.clear()

    reply = call("GET", f"/orgs/{org_id}/users", caller=ADMIN_A)

    assert reply.status in (403, 422), reply.body
    assert dynamodb_calls == []
    _leaks_nothing_of_bolt(reply)


def test_ones_own_org_id_percent_encoded_is_refused_or_read_as_itself(orgs):
    reply = call("GET", "/orgs/%61cme/users", caller=ADMIN_A)

    assert reply.status in (200, 422), reply.body
    _leaks_nothing_of_bolt(reply)
