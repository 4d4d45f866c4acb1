"""The merged OpenAPI document tells the truth: no two functions describe one thing two ways, each
operation says who may call it and what it costs as the code does, and Spectral finds nothing."""

import copy
import json
import re
import subprocess
from pathlib import Path

import pytest
from aws_lambda_powertools.event_handler.openapi.exceptions import OpenAPIMergeError

from controlplane.http.routes import FUNCTIONS, ROUTES
from controlplane.logic.access import ADMIN, FIELD_RULES
from local import ROOT, descriptions, openapi
from local.samples import BODIES
from tests.api import admin, call, create_org, create_ticket, create_user, member


def _conflicts(parts: dict[str, dict]) -> list[str]:
    """Schema names that two functions define differently (OpenAPIMerge would keep the last)."""
    definitions: dict[str, set[str]] = {}
    for part in parts.values():
        for name, schema in part.get("components", {}).get("schemas", {}).items():
            definitions.setdefault(name, set()).add(json.dumps(schema, sort_keys=True))
    return sorted(name for name, found in definitions.items() if len(found) > 1)


def _shared(parts: dict[str, dict]) -> set[str]:
    names = [set(part.get("components", {}).get("schemas", {})) for part in parts.values()]
    return set.intersection(*names)


def test_schemas_the_functions_share_are_defined_the_same_way_by_each():
    parts = openapi.parts()

    assert _shared(parts)  # the error bodies at least: the check has something to compare
    assert _conflicts(parts) == []


def test_a_schema_defined_differently_by_two_functions_is_found():
    parts = copy.deepcopy(openapi.parts())
    name = sorted(_shared(parts))[0]
    first = next(iter(parts))
    parts[first]["components"]["schemas"][name]["description"] = "not what the others say"

    assert _conflicts(parts) == [name]


def test_a_route_described_by_two_functions_is_refused():
    part = next(iter(openapi.parts().values()))

    with pytest.raises(OpenAPIMergeError):
        openapi.merged([part, copy.deepcopy(part)])


# Spectral's OpenAPI ruleset, from node_modules and .spectral.yaml: offline, as make test runs it.
SPECTRAL = ROOT / "node_modules" / ".bin" / "spectral"


def _spectral(document: Path) -> subprocess.CompletedProcess:
    command = [str(SPECTRAL), "lint", str(document), "--ruleset", str(ROOT / ".spectral.yaml"), "--fail-severity=warn"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_swagger_uis_token_help_names_only_the_make_token_commands_the_makefile_offers():
    # Given the Makefile's own help for make token: a user's role is their item's (docs/LOCAL.md),
    # so no ROLE= there; a ROLE= in Swagger UI's help would be ignored, and mislead whoever pastes it
    makefile_help = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("token:"))
    offered = set(re.findall(r"make token(?: [A-Z]+=\w+)*", makefile_help))

    # When Swagger UI's Authorize dialog says how to get a token locally
    suggested = re.findall(r"make token(?: [A-Z]+=\w+)*", openapi.BEARER["description"])

    # Then each command it suggests is one the Makefile offers
    assert suggested and set(suggested) <= offered, (suggested, offered)


def test_the_committed_document_passes_spectrals_openapi_rules_with_no_warning():
    linted = _spectral(openapi.COMMITTED)

    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "warning" not in linted.stdout


def test_spectral_fails_a_document_with_an_operation_it_would_warn_about(tmp_path):
    # Given the document with one operation's description gone
    document = openapi.document()
    del document["paths"]["/plans"]["get"]["description"]
    (tmp_path / "openapi.json").write_text(json.dumps(document))

    # When Spectral lints it, Then the warning fails the check
    linted = _spectral(tmp_path / "openapi.json")

    assert linted.returncode != 0
    assert "operation-description" in linted.stdout


def test_every_operation_has_words_of_its_own_and_every_tag_is_declared():
    document = openapi.document()

    assert set(descriptions.OPERATIONS) == {route.operation_id for route in ROUTES}
    declared = [tag["name"] for tag in document["tags"]]
    assert declared == list(FUNCTIONS)
    for route in ROUTES:
        operation = document["paths"][route.path][route.method.lower()]
        assert operation["description"].startswith(descriptions.OPERATIONS[route.operation_id].does)
        assert operation["tags"] == [route.function]


def test_who_may_call_is_the_records_allow_in_words():
    by_id = {route.operation_id: route for route in ROUTES}

    assert descriptions.who_may_call(by_id["deleteOrg"]) == "**Who may call it:** operators only."
    assert "any signed-in caller" in descriptions.who_may_call(by_id["listPlans"])
    assert descriptions.who_may_call(by_id["getTicket"]) == (
        "**Who may call it:** operators, the org's admins and a member, for the tickets they own."
    )


def test_a_rule_the_descriptions_cannot_name_fails_rather_than_being_left_out():
    route = ROUTES[0]._replace(allow=frozenset({"auditor"}))

    with pytest.raises(ValueError, match="auditor"):
        descriptions.who_may_call(route)


# A body that changes each field FIELD_RULES keeps from some roles.
RULED_BODIES = {
    "plan": {"plan": "pro"},
    "status": {"status": "suspended", "suspension_reason": "Unpaid"},
    "suspension_reason": {"status": "suspended", "suspension_reason": "Unpaid"},
    "role": {"role": "admin"},
    "email": {"email": "alice@elsewhere.example"},
    "unit": {"unit": "root"},
}


def _ruled_fields(route) -> list[str]:
    """The fields the route's description says only some callers may change."""
    text = openapi.document()["paths"][route.path][route.method.lower()]["description"]
    sentences = re.findall(r"Only [^.]* may change ([^.]*)\.", text)
    return sorted(name for sentence in sentences for name in re.findall(r"`(\w+)`", sentence))


@pytest.fixture
def seeded(table):
    create_org("acme")
    create_user("acme", "root", role="admin")
    create_user("acme", "alice")
    ticket = create_ticket("acme", "alice").body["ticket_id"]
    assert call("POST", "/orgs/acme/units", {"unit_id": "eng", "name": "Engineering"}).status == 201
    rows = [{"user_id": "bob", "name": "Bob", "email": "bob@example.com"}]
    import_id = call("POST", "/orgs/acme/user-imports", {"rows": rows}).body["import_id"]
    return {"org_id": "acme", "user_id": "alice", "ticket_id": ticket, "unit_id": "eng", "import_id": import_id}


@pytest.mark.parametrize("table", ["moto"], indirect=True)
@pytest.mark.parametrize("route", [r for r in ROUTES if descriptions.OPERATIONS[r.operation_id].field_rules], ids=str)
def test_the_fields_a_description_keeps_from_a_role_are_refused_to_it(seeded, route):
    ruled = _ruled_fields(route)
    assert ruled  # the description names some

    for name in ruled:
        # Given a caller the route allows but the field's rule does not: an admin, else a member on themselves
        caller = member() if ADMIN in FIELD_RULES[name] else admin()
        # When it changes the field, Then it is refused, naming the field
        reply = call(route.method, route.path.format(**seeded), RULED_BODIES[name], caller=caller)
        assert reply.status == 403, (name, reply.body)
        assert name in reply.body["error"]["message"]


@pytest.mark.parametrize("table", ["moto"], indirect=True)
def test_a_field_named_in_the_rules_is_free_on_a_route_whose_description_names_none(seeded):
    # A ticket's status shares its name with an org's, which only operators may change.
    reply = call("PATCH", f"/orgs/acme/tickets/{seeded['ticket_id']}", {"status": "solved"}, caller=member())

    assert reply.status == 200, reply.body
    assert _ruled_fields(next(r for r in ROUTES if r.operation_id == "updateTicket")) == []


COUNTED = [route for route in ROUTES if descriptions.OPERATIONS[route.operation_id].requests is not None]


def _sends(route, ids: dict, headers: dict | None = None):
    return call(route.method, route.path.format(**ids), BODIES.get((route.method, route.path)), headers=headers)


@pytest.mark.parametrize("table", ["moto"], indirect=True)
@pytest.mark.parametrize(
    "route", [r for r in ROUTES if descriptions.OPERATIONS[r.operation_id].requests is not None], ids=str
)
def test_each_operation_sends_the_dynamodb_requests_its_description_names(seeded, dynamodb_calls, route):
    reply = _sends(route, seeded)

    assert reply.status < 300, reply.body
    assert dynamodb_calls == list(descriptions.OPERATIONS[route.operation_id].requests)


@pytest.mark.parametrize("table", ["moto"], indirect=True)
@pytest.mark.parametrize("route", [r for r in ROUTES if r.location and r.status == 201], ids=str)
def test_a_create_with_an_idempotency_key_costs_what_its_description_adds(seeded, dynamodb_calls, route):
    reply = _sends(route, seeded, headers={"Idempotency-Key": "once"})

    assert reply.status == 201, reply.body
    requests = descriptions.OPERATIONS[route.operation_id].requests or ()
    assert len(dynamodb_calls) == len(requests) + descriptions.idempotency_requests(route)


@pytest.mark.parametrize("table", ["moto"], indirect=True)
def test_a_units_update_costs_what_a_rename_and_a_move_send_not_what_a_delete_does(seeded, dynamodb_calls):
    # Given the cost updateUnit's description gives, which grows with the data (a move)
    route = next(route for route in ROUTES if route.operation_id == "updateUnit")
    cost = descriptions.cost(route, descriptions.OPERATIONS[route.operation_id].requests)

    # When a unit is renamed, and then moved
    assert call("PATCH", "/orgs/acme/units/eng", {"name": "Eng"}).status == 200
    renamed = list(dynamodb_calls)
    assert call("POST", "/orgs/acme/units", {"unit_id": "ops", "name": "Ops"}).status == 201
    dynamodb_calls.clear()
    assert call("PATCH", "/orgs/acme/units/eng", {"parent_id": "ops"}).status == 200

    # Then the rename was the one UpdateItem it names, and the move, which deletes nothing, UpdateItems
    assert renamed == ["UpdateItem"]
    assert "DeleteItem" not in dynamodb_calls and "BatchWriteItem" not in dynamodb_calls
    assert "UpdateItem" in dynamodb_calls
    assert "deletes" not in cost and "BatchWriteItem" not in cost
    assert "a rename is one UpdateItem" in cost and "UpdateItems per unit" in cost


@pytest.mark.parametrize("table", ["moto"], indirect=True)
def test_a_users_move_costs_what_update_users_description_says(seeded, dynamodb_calls):
    # Given updateUser's description
    does = descriptions.OPERATIONS["updateUser"].does

    # When alice is moved into a unit, and then back to the root
    assert call("PATCH", "/orgs/acme/users/alice", {"unit": "eng"}).status == 200
    into_a_unit = list(dynamodb_calls)
    dynamodb_calls.clear()
    assert call("PATCH", "/orgs/acme/users/alice", {"unit": "root"}).status == 200

    # Then each sent what it says: a unit's placement read, the write with its check and the read back;
    # the root's, the route's one UpdateItem (the root is never stored, so there is nothing to check)
    assert into_a_unit == ["GetItem", "TransactWriteItems", "GetItem"]
    assert dynamodb_calls == ["UpdateItem"]
    assert "(a GetItem, a TransactWriteItems and a GetItem; to the root, the one UpdateItem)" in does
