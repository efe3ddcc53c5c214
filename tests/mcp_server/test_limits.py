"""
What one MCP request may ask for (issue 39): a 2025-03-26 batch holds at most MCP_MAX_BATCH messages, each counts
against the caller's limits as a request of its own would, and no answer is bigger than MCP_MAX_RESPONSE_BYTES.
In-process, through the MCP view, on both databases.
"""

import json

import pytest

from mcp_server.protocol import response_size
from sessions_app.models import ModeChange

pytestmark = pytest.mark.django_db

BATCH_VERSION = {"HTTP_MCP_PROTOCOL_VERSION": "2025-03-26"}
CHANGE = {"name": "agent_change_mode", "arguments": {"mode": "ddr_authoring", "branch": False, "reason": "Asked."}}


def post(client, alice, body, *, path="/mcp/", **headers):
    return client.post(
        path, json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {alice.api_key}",
        HTTP_ACCEPT="application/json, text/event-stream", **headers,
    )


def ping(number):
    return {"jsonrpc": "2.0", "id": number, "method": "ping"}


def test_a_batch_of_mcp_max_batch_messages_is_answered_each_in_order(client, alice):
    response = post(client, alice, [ping(number) for number in range(50)], **BATCH_VERSION)
    assert response.status_code == 200
    assert [reply["id"] for reply in response.json()] == list(range(50))


def test_a_longer_batch_is_refused_whole_naming_the_limit_and_runs_nothing(client, alice, alice_session):
    calls = [{"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": CHANGE} for number in range(51)]
    response = post(client, alice, calls, path=f"/mcp/sessions/{alice_session.pk}/", **BATCH_VERSION)
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0", "id": None,
        "error": {"code": -32600, "message": "A batch holds at most 50 messages (MCP_MAX_BATCH); this one holds 51. "
                  "Send them in batches of 50 or fewer."},
    }
    assert ModeChange.objects.count() == 0


def test_each_tool_call_of_a_batch_counts_against_the_callers_limit_as_one_request(
    client, alice, alice_session, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "tool-invoke": "2/day"},
    }
    calls = [{"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "agent_list_modes"}}
             for number in range(3)]
    replies = post(client, alice, calls, path=f"/mcp/sessions/{alice_session.pk}/", **BATCH_VERSION).json()
    assert ["result" in reply for reply in replies] == [True, True, False]
    assert replies[2]["error"]["code"] == -32000  # mcp_server.protocol.THROTTLED


def test_an_answer_over_mcp_max_response_bytes_is_a_json_rpc_error_naming_the_limit(client, alice, settings):
    settings.MCP_MAX_RESPONSE_BYTES = 1000
    read = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "modes://catalog"}}
    response = post(client, alice, read, HTTP_MCP_PROTOCOL_VERSION="2025-11-25")
    assert response.json()["id"] == 7
    assert response.json()["error"]["code"] == -32600
    assert response.json()["error"]["message"].startswith("The answer would be ")
    assert "over the limit of 1000 bytes (MCP_MAX_RESPONSE_BYTES)" in response.json()["error"]["message"]
    assert len(response.content) < 1000


def test_a_batch_stops_answering_once_its_answers_would_pass_mcp_max_response_bytes(client, alice, settings):
    settings.MCP_MAX_RESPONSE_BYTES = 3000
    reads = [{"jsonrpc": "2.0", "id": number, "method": "resources/read", "params": {"uri": "modes://catalog"}}
             for number in range(20)]
    response = post(client, alice, reads, **BATCH_VERSION)
    replies = response.json()
    answered = [reply["id"] for reply in replies if "result" in reply]
    refused = [reply["id"] for reply in replies if "error" in reply]
    assert answered and refused and answered + refused == list(range(20))
    assert len(response.content) < 3000 + 200 * len(refused)


def test_a_mode_change_is_answered_whole_once_made_and_not_made_once_the_batch_has_no_room(
    client, alice, alice_session, settings
):
    # It was made, then answered "send it in a request of its own": a client that did changed the mode twice.
    settings.MCP_MAX_RESPONSE_BYTES = 2000  # the read (1 kB) and then the change (1.5 kB) pass it; either alone does not
    path = f"/mcp/sessions/{alice_session.pk}/"
    read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "modes://catalog"}}
    change = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": CHANGE}

    first_read, made = post(client, alice, [read, change], path=path, **BATCH_VERSION).json()

    assert json.loads(made["result"]["content"][0]["text"])["mode"] == "ddr_authoring"
    assert ModeChange.objects.count() == 1

    settings.MCP_MAX_RESPONSE_BYTES = response_size(first_read)  # the read fills it
    back = {**change, "params": {**CHANGE, "arguments": {**CHANGE["arguments"], "mode": "general"}}}
    _, not_made = post(client, alice, [read, back], path=path, **BATCH_VERSION).json()

    assert not_made["error"]["message"].endswith("so it was not run: send it in a request of its own.")
    alice_session.refresh_from_db()
    assert (alice_session.mode.key, ModeChange.objects.count()) == ("ddr_authoring", 1)


@pytest.mark.parametrize("message", [
    {"method": "resources/read", "params": {"uri": "modes://modes/" + "x" * 60_000}},
    {"method": "x" * 60_000},
])
def test_an_error_repeats_no_more_than_a_line_of_what_was_sent(client, alice, message):
    # A 60 kB key or method name came back whole in the error's message.
    body = {"jsonrpc": "2.0", "id": 1, **message}
    error = post(client, alice, body, HTTP_MCP_PROTOCOL_VERSION="2025-11-25").json()["error"]
    assert error["code"] in (-32002, -32601)
    assert len(json.dumps(error)) < 1000
