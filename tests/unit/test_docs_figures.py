"""The figures the docs state that a constant of the code decides: the plans' seats and request limits
(docs/API.md, docs/LIMITS.md, from models/plans.py), the page size (docs/API.md, from
http/params.py), each error code's status (docs/API.md, from http/errors.py), how often a call is
tried (docs/API.md, docs/EVENTS.md), the authorizer's time (docs/SECURITY.md), the fields' lengths
and the limits of units, imports and bodies (docs/API.md). A change of the constant that forgets the
docs fails here."""

import re
from typing import Any

import boto3

from authorizer import handler as authorizer
from controlplane import config
from controlplane.dal import imports as import_items
from controlplane.dal import transactions
from controlplane.http import errors, params, routes
from controlplane.lifecycle import publisher
from controlplane.logic import import_job
from controlplane.models import imports, plans, units
from controlplane.models.resources import OrgCreate, OrgUpdate, TicketCreate
from local import ROOT

API = (ROOT / "docs" / "API.md").read_text()
LIMITS = (ROOT / "docs" / "LIMITS.md").read_text()


def _number(cell: str) -> int | None:
    """A table cell's figure: ``1,000`` is 1000; ``no daily quota`` and an empty cell are None."""
    digits = cell.replace(",", "").strip()
    return int(digits) if digits.isdigit() else None


def _rows(page: str, header: str) -> dict[str, list[str]]:
    """The rows of the markdown table whose header row starts with ``header``, by their first cell
    (its code span's text, or the whole cell)."""
    lines = page.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        first, *cells = [cell.strip() for cell in line.strip("|").split("|")]
        name = re.match(r"`([^`]+)`", first)
        rows[name[1] if name else first] = cells
    return rows


def test_the_seats_table_of_the_api_is_the_catalogue():
    rows = _rows(API, "| plan | seats")

    assert {plan: _number(cells[0]) for plan, cells in rows.items()} == {
        plan: plans.limit(plan) for plan in plans.CATALOGUE
    }


def test_the_limits_table_is_the_catalogue_and_the_operators_limits():
    rows = _rows(LIMITS, "| plan | requests per second")
    documented = {plan: [_number(cell) for cell in cells] for plan, cells in rows.items()}

    expected = {plan: [*plans.REQUEST_LIMITS[plan], plans.limit(plan)] for plan in plans.CATALOGUE}
    operators = next(name for name in documented if name.startswith("operators"))
    expected[operators] = [*plans.OPERATOR_LIMITS, None]
    assert documented == expected


def test_the_api_states_each_plans_request_limits():
    prose = " ".join(API.split())  # the words as read, whatever the line breaks
    for plan, (per_second, burst, per_day) in plans.REQUEST_LIMITS.items():
        day = f"{per_day:,} a day" if per_day is not None else "no daily quota"
        assert f"`{plan}` {per_second:,} " in prose and f"(burst {burst:,}, {day})" in prose, plan
    assert f"operators {plans.OPERATOR_LIMITS.per_second:,} together" in prose


def test_the_page_size_is_the_routes():
    limit = params.Limit.__metadata__[0]

    assert f"`limit` ({limit.metadata[0].ge}\u2013{limit.metadata[1].le}, default {params.DEFAULT_LIMIT})" in API


def _documented_codes() -> dict[str, set[int]]:
    """docs/API.md's list of error codes: each code and the statuses written after it
    (`` `org_suspended` 403 (...) or 409 ``)."""
    section = API.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    prose = " ".join(section.split())
    found: dict[str, set[int]] = {}
    for code, status, other in re.findall(r"`([a-z_]+)` (\d{3})(?: \([^)]*\))?(?: or (\d{3}))?", prose):
        found.setdefault(code, set()).update(int(s) for s in (status, other) if s)
    return found


def test_the_api_lists_every_error_code_with_its_status():
    # API Gateway's own 4xx not otherwise named (infra/api.py's DEFAULT_4XX), and the local server's
    # malformed HTTP, are the one code no domain error carries.
    gateway_only = {"bad_request": {400}}
    documented = _documented_codes()

    assert documented.keys() == errors.STATUS.keys() | gateway_only.keys()
    assert {code: status for code, status in errors.STATUS.items() if status not in documented[code]} == {}


def test_the_retries_the_docs_state_are_the_codes():
    # botocore's max_attempts counts retries: the attempts are one more (docs/API.md once said 3).
    # Read from a client: botocore rewrites the config's own dict to total_max_attempts once a client
    # is made with it, as earlier tests in a whole run do.
    client = boto3.client("dynamodb", region_name="us-east-1", config=config.CLIENT_CONFIG)
    retries = client.meta.config.retries["total_max_attempts"] - 1
    api = " ".join(API.split())
    events = " ".join((ROOT / "docs" / "EVENTS.md").read_text().split())

    assert f"({retries + 1} attempts: the first and {retries} retries," in api
    assert f"(`TransactionConflict`), {transactions._CONFLICT_ATTEMPTS} attempts in all" in api
    assert f"again until {publisher.PUT_ATTEMPTS} calls have had a refusal" in events


def test_the_authorizers_time_the_docs_state_is_the_codes():
    security = " ".join((ROOT / "docs" / "SECURITY.md").read_text().split())

    assert f"**A decision has {authorizer.DECISION_SECONDS:g} s**" in security
    assert f"{authorizer.READS} requests at most" in security
    request = f"{authorizer.CONNECT_SECONDS:g} s to connect, {authorizer.READ_SECONDS:g} s to read"
    assert f"one botocore attempt of at most {authorizer.REQUEST_SECONDS:g} s ({request})" in security
    assert f"waits at most {authorizer.JWKS_TIMEOUT_SECONDS:g} s per socket operation" in security
    assert f"can end within the {authorizer.DECISION_SECONDS:g} s" in security
    pauses = f"up to {authorizer.PAUSE_SECONDS:g} s, then up to {2 * authorizer.PAUSE_SECONDS:g} s"
    assert f"waits a random pause first, {pauses}" in security


def _span(schema: dict[str, Any]) -> str:
    """A string field's length as the API doc writes it: ``1``, an en dash, ``200``."""
    return f"{schema.get('minLength', 0):,}\u2013{schema['maxLength']:,}"


def test_the_apis_field_lengths_are_the_models():
    ticket = TicketCreate.model_json_schema()["properties"]
    reason = OrgUpdate.model_json_schema()["properties"]["suspension_reason"]["anyOf"][0]
    tag = ticket["tags"]["items"]

    prose = " ".join(API.split())
    assert f"`name` ({_span(OrgCreate.model_json_schema()['properties']['name'])})" in prose
    assert f"`subject` ({_span(ticket['subject'])})" in prose
    assert f"`description` ({_span(ticket['description'])})" in prose
    assert f"(at most {ticket['tags']['maxItems']} unique, {_span(tag)} characters each)" in prose
    assert f"required, {_span(reason)} characters" in prose


def test_the_apis_limits_of_units_imports_and_bodies_are_the_codes():
    prose = " ".join(API.split())

    assert f"at most {units.MAX_DEPTH} levels and {units.MAX_UNITS:,} units" in prose
    assert f"deeper than {units.MAX_DEPTH} or larger than {units.MAX_UNITS:,} units" in prose
    assert f"A move of up to {units.MOVE_IN_REQUEST} units and users is done in its request" in prose
    assert f"(1 to {imports.MOST_ROWS:,} users" in prose
    assert f"a body up to {routes.IMPORT_BODY_BYTES // 1024:,} KiB" in prose
    assert f"in transactions of up to {import_items.PART_ROWS} " in prose
    assert f"their sign-ins, {import_job.IMPORT_SIGNINS_PER_SECOND:g} a second" in prose
    assert f"{import_job.SIGN_IN_ATTEMPTS} times in all" in prose
    assert f"bodies over {errors.MAX_BODY_BYTES // 1024} KiB" in prose
