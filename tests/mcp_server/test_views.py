"""
The MCP view's handling of one HTTP request (mcp_server/views.py), in-process on both databases: a 2025-03-26 batch
is answered message by message, each as a request of its own would be.
"""

import json

import pytest

pytestmark = pytest.mark.django_db

BATCH_VERSION = {"HTTP_MCP_PROTOCOL_VERSION": "2025-03-26"}
TO_DDR = {"mode": "ddr_authoring", "branch": False, "reason": "The user wants a DDR."}


def post(client, alice, body, *, path):
    return client.post(
        path, json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {alice.api_key}",
        HTTP_ACCEPT="application/json, text/event-stream", **BATCH_VERSION,
    )


def test_the_messages_of_a_batch_after_a_mode_change_are_answered_for_the_new_mode(client, alice, alice_session):
    # They were answered for the mode the session had when the request came: tools/list listed general's tools, and
    # agent_hello_world, which ddr_authoring does not enable, ran in a session already in ddr_authoring.
    path = f"/mcp/sessions/{alice_session.pk}/"
    change = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "agent_change_mode", "arguments": TO_DDR}}
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    hello = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "agent_hello_world", "arguments": {"name": "Ada"}}}

    changed, tools, greeted = post(client, alice, [change, listed, hello], path=path).json()

    assert changed["result"]["isError"] is False
    assert [tool["name"] for tool in tools["result"]["tools"]] == ["agent_change_mode", "agent_list_modes"]
    assert greeted["error"]["code"] == -32602
    assert greeted["error"]["message"] == (
        "Unknown tool: agent_hello_world. Mode 'ddr_authoring' of this session does not enable it."
    )


@pytest.mark.parametrize(
    "absent", [{"requestState": None}, {"inputResponses": None}, {}], ids=["state", "responses", "neither"]
)
def test_a_first_call_that_sends_the_answers_fields_as_null_is_a_first_call(client, alice, alice_session, absent):
    # A null field is an absent one, as JSON clients write optional fields: the call is run, not refused as an answer.
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "agent_change_mode", "arguments": TO_DDR, "_meta": meta, **absent}}
    response = client.post(
        f"/mcp/sessions/{alice_session.pk}/", json.dumps(body), content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {alice.api_key}", HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION="2026-07-28", HTTP_MCP_METHOD="tools/call", HTTP_MCP_NAME="agent_change_mode",
    )

    assert response.status_code == 200, response.json()
    assert response.json()["result"]["isError"] is False
    alice_session.refresh_from_db()
    assert alice_session.mode.key == "ddr_authoring"
