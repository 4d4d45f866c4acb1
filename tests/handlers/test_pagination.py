import base64
import string

import pytest

from tests.api import call, create_org, create_ticket, create_user


def _pages(path: str, limit: int = 20, key: str = "items") -> list[list[dict]]:
    """Follow next_cursor from the first page to the last (a list that never ends fails, not hangs)."""
    pages, cursor = [], None
    for _ in range(100):
        query = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        reply = call("GET", path, query=query)
        assert reply.status == 200, reply.body
        pages.append(reply.body[key])
        cursor = reply.body["next_cursor"]
        if cursor is None:
            return pages
    raise AssertionError(f"{path}: no last page after 100 pages")


@pytest.fixture
def alice_with_45_tickets(table):
    create_org("acme")
    create_user("acme", "alice")
    return [create_ticket("acme", "alice", subject=f"t{i}").body["ticket_id"] for i in range(45)]


def test_45_tickets_come_in_pages_of_20_20_5_strictly_newest_first(alice_with_45_tickets):
    pages = _pages("/orgs/acme/users/alice/tickets")

    assert [len(page) for page in pages] == [20, 20, 5]
    listed = [t["ticket_id"] for page in pages for t in page]
    assert listed == alice_with_45_tickets[::-1]


def test_include_tickets_first_page_continues_on_the_ticket_list(alice_with_45_tickets):
    first = call("GET", "/orgs/acme/users/alice", query={"include": "tickets", "limit": 20}).body

    rest = call("GET", "/orgs/acme/users/alice/tickets", query={"limit": 25, "cursor": first["next_cursor"]}).body

    listed = [t["ticket_id"] for t in first["tickets"] + rest["items"]]
    assert len(first["tickets"]) == 20
    assert listed == alice_with_45_tickets[::-1]


def test_45_users_come_in_pages_of_20_20_5_without_gaps(table):
    create_org("acme", plan="pro")
    user_ids = sorted(f"user-{i:02d}" for i in range(45))
    for user_id in user_ids:
        create_user("acme", user_id)

    pages = _pages("/orgs/acme/users")

    assert [len(page) for page in pages] == [20, 20, 5]
    assert [u["user_id"] for page in pages for u in page] == user_ids


def test_include_users_first_page_continues_on_the_user_list(table):
    create_org("acme", plan="pro")
    user_ids = sorted(f"user-{i:02d}" for i in range(30))
    for user_id in user_ids:
        create_user("acme", user_id)

    first = call("GET", "/orgs/acme", query={"include": "users", "limit": 20}).body
    rest = call("GET", "/orgs/acme/users", query={"cursor": first["next_cursor"]}).body

    assert len(first["users"]) == 20
    assert [u["user_id"] for u in first["users"] + rest["items"]] == user_ids
    assert rest["next_cursor"] is None


@pytest.mark.parametrize(
    ("path", "include"), [("/orgs/acme", "users"), ("/orgs/acme/users/alice", "tickets")], ids=["org", "user"]
)
def test_a_cursor_beside_include_is_422_not_the_first_page_again(alice_with_45_tickets, path, include):
    # include= is the first page; the cursor it returns goes on the list route.
    create_user("acme", "bob")
    cursor = call("GET", path, query={"include": include, "limit": 1}).body["next_cursor"]
    assert cursor is not None

    reply = call("GET", path, query={"include": include, "limit": 1, "cursor": cursor})

    assert reply.status == 422, reply.body
    assert [detail["loc"] for detail in reply.body["error"]["details"]] == [["query", "cursor"]]


def test_45_orgs_come_in_pages_of_20_20_5_without_gaps(table):
    org_ids = sorted(f"org-{i:02d}" for i in range(45))
    for org_id in org_ids:
        create_org(org_id)

    pages = _pages("/orgs")

    assert [len(page) for page in pages] == [20, 20, 5]
    assert [o["org_id"] for page in pages for o in page] == org_ids


def test_default_page_size_is_20(alice_with_45_tickets):
    reply = call("GET", "/orgs/acme/users/alice/tickets")

    assert len(reply.body["items"]) == 20
    assert reply.body["next_cursor"]


@pytest.mark.parametrize("limit", ["0", "101", "-1", "ten", "2.5"])
def test_limit_outside_1_to_100_returns_422(table, limit):
    reply = call("GET", "/orgs", query={"limit": limit})

    assert reply.status == 422
    assert reply.error_code == "validation_error"


@pytest.mark.parametrize("limit", ["10.0", "1_0", "+5", " 5", "5 ", "1e1", "0x5", "\u0665"])
def test_a_limit_not_in_decimal_digits_is_422_though_it_reads_as_a_number(table, limit):
    reply = call("GET", "/orgs", query={"limit": limit})

    assert reply.status == 422, reply.body
    assert [(detail["loc"], detail["message"]) for detail in reply.body["error"]["details"]] == [
        (["query", "limit"], "must be written in decimal digits")
    ]
    assert call("GET", "/orgs", query={"limit": "05"}).status == 200  # digits, with a leading zero


BASE64URL = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"


def _first_cursor() -> str:
    return call("GET", "/orgs/acme/users/alice/tickets", query={"limit": 2}).body["next_cursor"]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda c: c[:-2] + ("AA" if c[-2:] != "AA" else "BB"),  # altered signature
        lambda c: "e30" + c[3:],  # altered payload
        lambda c: c.split(".")[0],  # signature stripped
        lambda c: "not-a-cursor",
        lambda c: c + "." + c,
        lambda c: "ü.ü",
        # the same bytes spelled otherwise: one cursor has one spelling, the one the API gave
        lambda c: c.replace(".", "=.") + "=",  # padded
        lambda c: "!!!!" + c,  # characters a lenient base64 decoder skips
        lambda c: c[:-1] + BASE64URL[BASE64URL.index(c[-1]) ^ 1],  # a spare bit of the signature's last character
    ],
)
def test_tampered_cursor_returns_400_invalid_cursor(alice_with_45_tickets, tamper):
    reply = call("GET", "/orgs/acme/users/alice/tickets", query={"cursor": tamper(_first_cursor())})

    assert reply.status == 400
    assert reply.error_code == "invalid_cursor"


def test_cursor_of_another_users_list_returns_400(alice_with_45_tickets):
    create_user("acme", "bob")

    reply = call("GET", "/orgs/acme/users/bob/tickets", query={"cursor": _first_cursor()})

    assert reply.status == 400
    assert reply.error_code == "invalid_cursor"


def test_cursor_of_another_org_returns_400(alice_with_45_tickets):
    create_org("other")
    create_user("other", "alice")

    cursor = _first_cursor()
    assert call("GET", "/orgs/acme/users/alice/tickets", query={"cursor": cursor}).status == 200

    reply = call("GET", "/orgs/other/users/alice/tickets", query={"cursor": cursor})

    assert reply.status == 400
    assert reply.error_code == "invalid_cursor"


def test_cursor_of_another_kind_of_list_returns_400(alice_with_45_tickets):
    for org_id in ("org-a", "org-b"):
        create_org(org_id)
    orgs_cursor = call("GET", "/orgs", query={"limit": 1}).body["next_cursor"]

    reply = call("GET", "/orgs/acme/users", query={"cursor": orgs_cursor})

    assert reply.status == 400
    assert reply.error_code == "invalid_cursor"
    assert reply.error_code == "invalid_cursor"


QUERY_AND_GET = ["Query", "GetItem"]


@pytest.mark.parametrize(
    ("setup", "path", "missing", "calls"),
    [
        ((), "/orgs/ghost/users", "Organization ghost not found", ["Query"]),
        # the user's collection is empty: one GetItem more, on the 404's path only, says which is missing
        (("acme",), "/orgs/acme/users/ghost/tickets", "User ghost not found in organization acme", QUERY_AND_GET),
        ((), "/orgs/ghost/users/ghost/tickets", "Organization ghost not found", QUERY_AND_GET),
    ],
    ids=["users-of-missing-org", "tickets-of-missing-user", "tickets-of-missing-org"],
)
def test_a_list_of_a_missing_parent_is_404_that_names_it(table, dynamodb_calls, setup, path, missing, calls):
    for org_id in setup:
        create_org(org_id)
    dynamodb_calls.clear()

    reply = call("GET", path)

    assert reply.status == 404
    assert reply.error_code == "not_found"
    assert reply.body["error"]["message"] == missing
    assert dynamodb_calls == calls


def test_an_empty_list_of_an_existing_parent_is_200(table):
    create_org("acme")
    create_user("acme", "alice")

    assert call("GET", "/orgs/acme/users/alice/tickets").body == {"items": [], "next_cursor": None}
    assert call("GET", "/orgs/acme/users").body["next_cursor"] is None


def test_a_later_page_of_a_deleted_parent_is_an_empty_last_page_not_404(table):
    # docs/API.md: only a list's first page reads the org (or user) item, in its one Query; a later
    # page reads on after its cursor's item, so once the parent is gone it finds nothing
    create_org("acme")
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    create_ticket("acme", "alice", subject="one")
    create_ticket("acme", "alice", subject="two")
    users = call("GET", "/orgs/acme/users", query={"limit": 1}).body["next_cursor"]
    tickets = call("GET", "/orgs/acme/users/alice/tickets", query={"limit": 1}).body["next_cursor"]

    assert call("DELETE", "/orgs/acme/users/alice").status == 204
    later_tickets = call("GET", "/orgs/acme/users/alice/tickets", query={"cursor": tickets})
    assert call("DELETE", "/orgs/acme").status == 204
    later_users = call("GET", "/orgs/acme/users", query={"cursor": users})

    assert (later_tickets.status, later_tickets.body) == (200, {"items": [], "next_cursor": None})
    assert (later_users.status, later_users.body) == (200, {"items": [], "next_cursor": None})
    assert call("GET", "/orgs/acme/users").status == 404


def test_an_empty_cursor_is_the_first_page(alice_with_45_tickets):
    first = call("GET", "/orgs/acme/users/alice/tickets", query={"cursor": ""}).body

    assert [t["ticket_id"] for t in first["items"]] == alice_with_45_tickets[::-1][:20]


@pytest.mark.parametrize(
    "path",
    [
        "/orgs",
        "/orgs/acme/users",
        "/orgs/acme/users/alice/tickets",
        "/orgs/acme/users/alice?include=tickets",
        "/orgs/acme/units",
        "/orgs/acme/units/root/users",
    ],
)
def test_cursors_carry_no_key_attribute(alice_with_45_tickets, path):
    for i in range(3):
        create_org(f"org{i}")
        create_user("acme", f"user{i}")
        assert call("POST", "/orgs/acme/units", {"unit_id": f"unit{i}", "name": f"Unit {i}"}).status == 201
    base, _, include = path.partition("?include=")

    cursor = call("GET", base, query={"limit": 1} | ({"include": include} if include else {})).body["next_cursor"]

    shown = base64.urlsafe_b64decode(cursor.split(".")[0] + "==").decode()
    assert "#" not in shown and "{" not in shown, shown  # an id, not a key


def test_a_unit_listings_cursor_holds_the_last_units_place_the_move_count_and_the_units_creation(table):
    # docs/API.md: not only an id: the place in the tree a page ends at, the org's move count (a
    # move since is 409 conflict) and the listed unit's created_at (a unit created again since, too)
    create_org("acme")
    created = call("POST", "/orgs/acme/units", {"unit_id": "eng", "name": "Eng"}).body["created_at"]
    for unit_id in ("api", "web"):
        call("POST", "/orgs/acme/units", {"unit_id": unit_id, "name": unit_id, "parent_id": "eng"})

    page = call("GET", "/orgs/acme/units", query={"under": "eng", "limit": 2}).body

    shown = base64.urlsafe_b64decode(page["next_cursor"].split(".")[0] + "==").decode()
    assert shown == f"0|{created}|{page['items'][-1]['path']}" == f"0|{created}|/eng/api"


def _four_of_each() -> None:
    """acme with 4 units and 4 users (in eng), alice with 4 tickets; 4 orgs in all."""
    for org_id in ("acme", "bolt", "corp", "dyne"):
        create_org(org_id, plan="pro")
    for unit_id in ("eng", "fin", "hr", "ops"):
        assert call("POST", "/orgs/acme/units", {"unit_id": unit_id, "name": unit_id.title()}).status == 201
    for user_id in ("alice", "bob", "carol", "dave"):
        create_user("acme", user_id, unit="eng")
        create_ticket("acme", "alice", subject=user_id)


@pytest.mark.parametrize(
    "path",
    ["/orgs", "/orgs/acme/users", "/orgs/acme/users/alice/tickets", "/orgs/acme/units", "/orgs/acme/units/eng/users"],
)
def test_a_list_of_twice_limit_ends_at_null_after_its_full_pages_and_at_most_one_empty_page(table, request, path):
    # Given a list of 4 items, read 2 at a time
    _four_of_each()
    whole = call("GET", path, query={"limit": "100"}).body["items"]
    assert len(whole) == 4

    # When its cursors are followed to null
    pages = _pages(path, limit=2)

    # Then each item comes once, in order, in two full pages; DynamoDB gives the second a cursor (its
    # Query stopped at the limit), whose page is empty and the last; moto gives it none. docs/API.md:
    # a full last page may have a cursor
    assert [item for page in pages for item in page] == whole
    on_dynamodb = request.node.callspec.params["table"] == "dynamodb_local"
    assert [len(page) for page in pages] == ([2, 2, 0] if on_dynamodb else [2, 2])


# Every list a cursor can come from (an include's continues its list route), and where it goes on.
_LISTS = {
    "/orgs": "/orgs",
    "/orgs/acme/users": "/orgs/acme/users",
    "/orgs/acme?include=users": "/orgs/acme/users",
    "/orgs/acme/users/alice/tickets": "/orgs/acme/users/alice/tickets",
    "/orgs/acme/users/alice?include=tickets": "/orgs/acme/users/alice/tickets",
    "/orgs/acme/units": "/orgs/acme/units",
    "/orgs/acme/units?under=eng": "/orgs/acme/units?under=eng",
    "/orgs/acme/units/eng/users": "/orgs/acme/units/eng/users",
    "/orgs/acme/units/eng/users?direct=true": "/orgs/acme/units/eng/users?direct=true",
}
# Every list route, in acme and in bolt, which has the same ids: another tenant, user, scope or kind.
_TARGETS = [
    path.replace("acme", org_id)
    for org_id in ("acme", "bolt")
    for path in (
        "/orgs/acme/users",
        "/orgs/acme/users/alice/tickets",
        "/orgs/acme/users/bob/tickets",
        "/orgs/acme/units",
        "/orgs/acme/units?under=eng",
        "/orgs/acme/units?under=hr",
        "/orgs/acme/units/eng/users",
        "/orgs/acme/units/eng/users?direct=true",
        "/orgs/acme/units/hr/users",
        "/orgs/acme/units/root/users",
    )
] + ["/orgs"]


def _get(target: str, **query):
    path, _, rest = target.partition("?")
    return call("GET", path, query=dict([rest.split("=")] if rest else []) | query)


@pytest.mark.parametrize("taken", list(_LISTS))
def test_a_cursor_goes_on_only_with_the_list_it_came_from(table, taken):
    # Given two orgs of the same ids: units eng (with hr under it), users in eng, alice's and bob's tickets
    for org_id in ("acme", "bolt"):
        create_org(org_id, plan="pro")
        for unit_id, parent_id in (("eng", None), ("hr", "eng")):
            body = {"unit_id": unit_id, "name": unit_id.title(), **({"parent_id": parent_id} if parent_id else {})}
            assert call("POST", f"/orgs/{org_id}/units", body).status == 201
        for user_id, unit in (("alice", "eng"), ("bob", "eng"), ("carol", "hr")):
            create_user(org_id, user_id, unit=unit)
            for subject in ("one", "two"):
                create_ticket(org_id, user_id, subject=subject)
    cursor = _get(taken, limit="1").body["next_cursor"]
    assert cursor

    # When it is sent to every list route
    answers = {target: _get(target, cursor=cursor) for target in _TARGETS}

    # Then its own list goes on, and every other refuses it as a cursor of another list
    assert {target for target, reply in answers.items() if reply.status == 200} == {_LISTS[taken]}
    refused = {(reply.status, reply.error_code) for target, reply in answers.items() if target != _LISTS[taken]}
    assert refused == {(400, "invalid_cursor")}


def _id(item: dict) -> str:
    return item.get("ticket_id") or item.get("unit_id") or item.get("user_id") or item["org_id"]


# Each list of _four_of_each, how to delete one of its items, and how to add one (its id sorts after
# every id there, which in the tickets' newest-first order is before them all).
_CHANGES = {
    "/orgs": (lambda i: call("DELETE", f"/orgs/{i}"), lambda: create_org("zeta")),
    "/orgs/acme/users": (lambda i: call("DELETE", f"/orgs/acme/users/{i}"), lambda: create_user("acme", "zed")),
    "/orgs/acme/users/alice/tickets": (
        lambda i: call("DELETE", f"/orgs/acme/tickets/{i}"),
        lambda: create_ticket("acme", "alice", subject="new"),
    ),
    "/orgs/acme/units": (
        lambda i: call("DELETE", f"/orgs/acme/units/{i}"),
        lambda: call("POST", "/orgs/acme/units", {"unit_id": "zed", "name": "Zed"}),
    ),
    "/orgs/acme/units/eng/users": (
        lambda i: call("DELETE", f"/orgs/acme/users/{i}"),
        lambda: create_user("acme", "zed", unit="eng"),
    ),
}


@pytest.mark.parametrize("path", list(_CHANGES))
def test_items_deleted_and_created_between_pages_repeat_nothing_and_skip_nothing_that_stayed(table, path):
    # Given a first page of 2 of a list of 4
    _four_of_each()
    delete, create = _CHANGES[path]
    before = [_id(item) for item in call("GET", path, query={"limit": "100"}).body["items"]]
    first = call("GET", path, query={"limit": "2"}).body

    # When the page's last item is deleted, and an item added, before the next page
    assert delete(_id(first["items"][-1])).status == 204
    assert create().status == 201
    after = [_id(item) for item in call("GET", path, query={"limit": "100"}).body["items"]]
    rest, cursor = [], first["next_cursor"]
    for _ in range(5):  # 4 items at most are left: a list that never ends fails, not hangs
        if not cursor:
            break
        page = call("GET", path, query={"limit": "2", "cursor": cursor}).body
        rest, cursor = rest + page["items"], page["next_cursor"]
    assert cursor is None

    # Then no item comes twice, and every item there before and after comes
    shown = [_id(item) for item in first["items"] + rest]
    assert len(shown) == len(set(shown)), shown
    assert {i for i in before if i in after} <= set(shown), (before, after, shown)


def test_a_first_page_that_holds_no_user_still_leads_to_every_user(table):
    from controlplane.dal.table import api_table
    from controlplane.logic import cascade

    # Given acme with alice and bob, and a sweep marker of a deleted user (it sorts before the users)
    create_org("acme")
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
    cascade.mark_for_sweep(api_table(), "acme", "carol")

    # When the users are listed one a page, the first page's room taken by the counter and the marker
    first = call("GET", "/orgs/acme/users", query={"limit": 1})
    pages = [first.body["items"]]
    cursor = first.body["next_cursor"]
    while cursor:
        reply = call("GET", "/orgs/acme/users", query={"limit": 1, "cursor": cursor})
        pages.append(reply.body["items"])
        cursor = reply.body["next_cursor"]

    # Then an empty first page still gives a cursor, and the pages hold every user once
    assert first.status == 200, first.body
    assert [u["user_id"] for page in pages for u in page] == ["alice", "bob"]
