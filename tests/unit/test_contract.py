"""The check every test's answers go through (``tests.contract``) fails on an answer the OpenAPI
document does not give: a body that breaks its schema, a required header missing or in another form,
a body where none is documented, a status the route does not have."""

import pytest

from controlplane.http.routes import operation
from controlplane.models.resources import User, UserPage
from local.apigw import Reply
from tests import contract

CREATE_USER, LIST_USERS, DELETE_USER = (operation(name) for name in ("createUser", "listUsers", "deleteUser"))
STAMP = "2026-01-01T00:00:00Z"
USER = User(
    org_id="acme", user_id="alice", name="Alice", email="alice@example.com", role="member",
    created_at=STAMP, updated_at=STAMP, version=1,
).model_dump(mode="json")  # fmt: skip
CREATED = {"Location": "/orgs/acme/users/alice", "ETag": '"1"'}
THROTTLED = {"error": {"code": "throttled", "message": "Too many requests", "request_id": "r-1"}}


def test_an_answer_as_documented_passes():
    contract.check(CREATE_USER, Reply(201, CREATED, USER))
    contract.check(LIST_USERS, Reply(200, {}, UserPage(items=[User(**USER)], next_cursor=None).model_dump(mode="json")))
    contract.check(DELETE_USER, Reply(204, {}, None))
    contract.check(LIST_USERS, Reply(429, {"Retry-After": "1"}, THROTTLED))


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({key: value for key, value in USER.items() if key != "email"}, 'at /: "email" is a required property'),
        ({**USER, "version": "1"}, "at /version: "),
        ({**USER, "role": "owner"}, "at /role: "),
    ],
    ids=["missing-field", "wrong-type", "not-in-enum"],
)
def test_a_body_that_breaks_the_schema_fails_naming_route_status_and_path(body, where):
    with pytest.raises(AssertionError) as failure:
        contract.check(CREATE_USER, Reply(201, CREATED, body))

    assert "POST /orgs/{org_id}/users answered 201, not its documented body" in str(failure.value)
    assert where in str(failure.value)


def test_a_wrong_field_deep_in_a_page_is_named_by_its_path():
    page = {"items": [USER, {**USER, "created_at": None}], "next_cursor": None}

    with pytest.raises(AssertionError, match=r"GET /orgs/\{org_id\}/users answered 200, .* at /items/1/created_at: "):
        contract.check(LIST_USERS, Reply(200, {}, page))


def test_an_error_body_out_of_the_error_contract_fails():
    with pytest.raises(AssertionError, match=r"answered 429, .* at /error: \"request_id\" is a required property"):
        contract.check(LIST_USERS, Reply(429, {"Retry-After": "1"}, {"error": {"code": "throttled", "message": "x"}}))


@pytest.mark.parametrize("missing", ["Location", "ETag"])
def test_a_create_without_a_required_header_fails(missing):
    headers = {name: value for name, value in CREATED.items() if name != missing}

    with pytest.raises(AssertionError, match=f"answered 201 without its required {missing} header"):
        contract.check(CREATE_USER, Reply(201, headers, USER))


def test_a_header_in_another_form_fails():
    with pytest.raises(AssertionError, match=r"answered 429 with Retry-After: '1.5', not its documented form"):
        contract.check(LIST_USERS, Reply(429, {"Retry-After": "1.5"}, THROTTLED))


def test_an_etag_in_another_form_than_a_quoted_version_fails():
    with pytest.raises(AssertionError, match=r"answered 201 with ETag: '1', not its documented form"):
        contract.check(CREATE_USER, Reply(201, {**CREATED, "ETag": "1"}, USER))


def test_a_body_where_the_document_gives_none_fails():
    with pytest.raises(AssertionError, match="answered 204 with a body the document does not give"):
        contract.check(DELETE_USER, Reply(204, {}, {}))


def test_a_status_the_route_does_not_document_fails():
    with pytest.raises(AssertionError, match=r"DELETE /orgs/\{org_id\}/users/\{user_id\} answered 418, undocumented"):
        contract.check(DELETE_USER, Reply(418, {}, None))


def test_a_contract_header_sent_where_the_document_gives_none_fails():
    with pytest.raises(AssertionError, match=r"answered 200 with a retry-after header the document does not give it"):
        contract.check(LIST_USERS, Reply(200, {"Retry-After": "1"}, UserPage(items=[], next_cursor=None).model_dump()))
