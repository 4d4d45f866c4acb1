"""A valid request body for each route that takes one, naming nothing a fixture creates
(org ``newco``, user ``carol``, unit ``sales``); the tests, the benchmarks and the events/ files send these."""

BODIES: dict[tuple[str, str], dict] = {
    ("POST", "/orgs"): {"org_id": "newco", "name": "NewCo"},
    ("POST", "/orgs/{org_id}/users"): {"user_id": "carol", "name": "Carol", "email": "carol@example.com"},
    ("POST", "/orgs/{org_id}/user-imports"): {"rows": [{"user_id": "dan", "name": "Dan", "email": "dan@example.com"}]},
    ("POST", "/orgs/{org_id}/users/{user_id}/tickets"): {"subject": "Help"},
    ("PATCH", "/orgs/{org_id}"): {"name": "Renamed"},
    ("PATCH", "/orgs/{org_id}/users/{user_id}"): {"name": "Renamed"},
    ("PATCH", "/orgs/{org_id}/tickets/{ticket_id}"): {"status": "solved"},
    ("POST", "/orgs/{org_id}/units"): {"unit_id": "sales", "name": "Sales"},
    ("PATCH", "/orgs/{org_id}/units/{unit_id}"): {"name": "Renamed"},
}
