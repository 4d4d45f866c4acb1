from controlplane import config
from controlplane.dal import keys
from tests.api import call, create_org, create_ticket, create_user


def test_create_org_returns_201_with_location_and_defaults(table):
    reply = create_org("acme", name="Acme Inc")

    assert reply.status == 201
    assert reply.headers["Location"] == "/local/orgs/acme"
    assert reply.body["org_id"] == "acme"
    assert reply.body["name"] == "Acme Inc"
    assert reply.body["plan"] == "free"
    assert reply.body["version"] == 1
    assert reply.body["created_at"] == reply.body["updated_at"]
    assert reply.body["created_at"].endswith("Z")


def test_create_existing_org_returns_409_and_leaves_it_unchanged(table):
    create_org("acme", name="Original", plan="pro")

    reply = create_org("acme", name="Impostor")

    assert reply.status == 409
    assert reply.error_code == "already_exists"
    stored = call("GET", "/orgs/acme").body
    assert stored["name"] == "Original"
    assert stored["plan"] == "pro"


def test_stored_org_item_has_the_documented_keys_and_entity(table):
    create_org("acme")

    item = config.dynamodb().get_item(TableName=table, Key={"PK": {"S": "ORG#acme"}, "SK": {"S": "METADATA#acme"}})

    assert item["Item"]["GSI1PK"] == {"S": keys.ORGS_LISTING}
    assert item["Item"]["GSI1SK"] == {"S": "ORG#acme"}
    assert item["Item"]["entity"] == {"S": "org"}


def test_get_org_returns_it_without_key_attributes(table):
    create_org("acme")

    reply = call("GET", "/orgs/acme")

    assert reply.status == 200
    assert reply.body["org_id"] == "acme"
    assert not {"PK", "SK", "GSI1PK", "GSI1SK", "entity"} & set(reply.body)


def test_get_missing_org_returns_404(table):
    reply = call("GET", "/orgs/ghost")

    assert reply.status == 404
    assert reply.error_code == "not_found"
    assert reply.body["error"]["request_id"]


def test_get_org_with_users_returns_org_and_users(table):
    create_org("acme")
    for user_id in ("bob", "alice"):
        create_user("acme", user_id)

    reply = call("GET", "/orgs/acme", query={"include": "users"})

    assert reply.status == 200
    assert reply.body["org"]["org_id"] == "acme"
    assert [u["user_id"] for u in reply.body["users"]] == ["alice", "bob"]
    assert reply.body["next_cursor"] is None


def test_get_missing_org_with_users_returns_404(table):
    reply = call("GET", "/orgs/ghost", query={"include": "users"})

    assert reply.status == 404


def test_list_orgs_returns_all_orgs(table):
    for org_id in ("beta", "alpha"):
        create_org(org_id)

    reply = call("GET", "/orgs")

    assert reply.status == 200
    assert [o["org_id"] for o in reply.body["items"]] == ["alpha", "beta"]
    assert reply.body["next_cursor"] is None


def test_patch_org_changes_given_fields_and_bumps_version(table):
    created = create_org("acme", name="Acme").body

    reply = call("PATCH", "/orgs/acme", {"plan": "enterprise"})

    assert reply.status == 200
    assert reply.body["plan"] == "enterprise"
    assert reply.body["name"] == "Acme"
    assert reply.body["version"] == 2
    assert reply.body["updated_at"] >= created["updated_at"]
    assert reply.body["created_at"] == created["created_at"]


def test_patch_missing_org_returns_404_and_creates_nothing(table):
    reply = call("PATCH", "/orgs/ghost", {"name": "Ghost"})

    assert reply.status == 404
    assert call("GET", "/orgs/ghost").status == 404


def test_delete_org_removes_it_with_its_users_and_tickets(table):
    create_org("acme")
    create_org("other")
    for user_id in ("alice", "bob"):
        create_user("acme", user_id)
        create_ticket("acme", user_id)
    create_user("other", "alice")
    kept = create_ticket("other", "alice").body

    reply = call("DELETE", "/orgs/acme")

    assert reply.status == 204
    assert reply.body is None
    remaining = config.dynamodb().scan(TableName=table)["Items"]  # test-only inspection of the whole table
    assert {item["org_id"]["S"] for item in remaining} == {"other"}
    assert call("GET", f"/orgs/other/tickets/{kept['ticket_id']}").status == 200


def test_delete_missing_org_returns_404(table):
    reply = call("DELETE", "/orgs/ghost")

    assert reply.status == 404
    assert reply.error_code == "not_found"
