"""The local gateway's answers are held against the OpenAPI document too (``contract.watch``, which
the ``gateway`` fixture puts on every test that calls it over HTTP)."""

import json

import httpx

from local import apigw, server, tokens
from tests import contract


def test_an_answer_of_the_gateway_that_breaks_the_document_is_collected(table, monkeypatch):
    # Given a function whose answer to GET /orgs is not the documented page
    drift = contract.watch(monkeypatch)
    run = apigw.run

    def broken(function, event):
        return {**run(function, event), "body": json.dumps({"items": "no list", "next_cursor": None})}

    monkeypatch.setattr(apigw, "run", broken)

    # When a client calls it through the gateway
    with server.in_thread() as url:
        reply = httpx.get(f"{url}/orgs", headers={"Authorization": f"Bearer {tokens.issue(tokens.OPERATOR)}"})

    # Then the client gets the answer, and the mismatch is collected with its route, status and path
    assert reply.status_code == 200
    assert len(drift) == 1
    assert drift[0].startswith("GET /orgs answered 200, not its documented body: at /items: ")
