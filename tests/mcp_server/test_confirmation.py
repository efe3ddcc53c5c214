"""
The user confirms a mode change over MCP (issue 40), under MODE_CHANGE_CONFIRMATION=user, on a live server
(`make serve`): the `mcp` 2.3 client with an elicitation_callback is asked in 2026-07-28's input_required round
trip, and its answer (switch, branch, stay, decline) decides; a requestState tampered with, another call's or
replayed is refused and changes nothing (raw HTTP, which the SDK would never send); a client that cannot ask
(2026-07-28 without elicitation, any older protocol, the `mcp` 1.22 client) is refused with the tool's error.
"""

import asyncio
import json
import time
from datetime import UTC, datetime
from types import SimpleNamespace

import httpx2
import pytest
import requests
from django.utils import timezone
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitResult

from mcp_server import confirmation
from mcp_server.protocol import JsonRpcError
from sessions_app.confirmations import STAYED
from sessions_app.tools import CANNOT_ASK

from ..servers import make_users, production_env, scratch_database, serving
from .live import mode_changes, new_session
from .test_clients import SDKS, run_client

TO_DDR = {"mode": "ddr_authoring", "branch": False, "reason": "The user wants a DDR."}
CAPABLE = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}


@pytest.fixture(scope="module")
def database():
    with scratch_database() as env:
        yield {"env": env, "tokens": make_users(env, "carol", "dan")}


@pytest.fixture(scope="module")
def server(database):
    env = production_env(
        database["env"], MODE_CHANGE_CONFIRMATION="user", TOOL_INVOKE_RATE="1000/min", SESSION_CREATE_RATE="1000/min"
    )
    with serving("make-serve", env, "WORKERS=1") as server:
        yield server


@pytest.fixture(scope="module")
def token(database):
    return database["tokens"]["carol"]


def session_mode(server, token, session_id):
    response = requests.get(f"{server.base}/api/sessions/{session_id}/", headers={"Authorization": f"Token {token}"})
    assert response.status_code == 200
    return response.json()["mode"]


def call_with(url, token, arguments, *, answer=None, mode="2026-07-28"):
    """agent_change_mode called by the mcp 2.3 Client; answer(params) is its elicitation_callback (None: none)."""
    asked = []

    async def elicit(context, params):
        asked.append(params)
        return answer(params)

    async def work():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            callback = elicit if answer else None
            async with Client(
                streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=callback
            ) as client:
                return await client.call_tool("agent_change_mode", arguments)

    return asyncio.run(work()), asked


def choose(choice):
    return lambda params: ElicitResult(action="accept", content={"choice": choice})


def test_switch_asks_the_user_the_tools_question_and_their_switch_changes_the_mode(server, token):
    session_id = new_session(server, token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    result, [asked] = call_with(url, token, TO_DDR, answer=choose("switch"))

    assert asked.mode == "form"
    assert asked.message.startswith("It seems like what you are asking for would be better served by **DDR")
    schema = asked.requested_schema
    assert schema["required"] == ["choice"]
    assert schema["properties"]["choice"]["enum"] == ["stay", "switch", "branch"]
    assert result.is_error is False
    assert result.structured_content == {**TO_DDR, "success": True}
    assert len(result.content) == 2  # the new mode's Mode Catalog block, as any change over MCP
    assert session_mode(server, token, session_id) == "ddr_authoring"
    assert [change["toMode"] for change in mode_changes(server, token, session_id)] == ["ddr_authoring"]


def test_branch_chosen_by_the_user_starts_the_child_session(server, token):
    session_id = new_session(server, token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    result, _ = call_with(url, token, TO_DDR, answer=choose("branch"))  # the model proposed no branch: the user decides

    assert result.is_error is False
    child = result.structured_content["branchSessionId"]
    assert result.structured_content["branch"] is True
    assert session_mode(server, token, child) == "ddr_authoring"
    [audit] = mode_changes(server, token, session_id)
    assert (audit["toMode"], audit["branch"], audit["branchSessionId"]) == ("ddr_authoring", True, child)


@pytest.mark.parametrize(
    "answer",
    [choose("stay"), lambda params: ElicitResult(action="decline"), lambda params: ElicitResult(action="cancel")],
    ids=["stay", "decline", "cancel"],
)
def test_stay_or_a_decline_is_the_tools_error_and_changes_nothing(server, token, answer):
    session_id = new_session(server, token)
    result, asked = call_with(f"{server.base}/mcp/sessions/{session_id}/", token, TO_DDR, answer=answer)

    assert len(asked) == 1
    assert (result.is_error, [item.text for item in result.content]) == (True, [STAYED])
    assert session_mode(server, token, session_id) == "general"
    assert mode_changes(server, token, session_id) == []


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"], ids=["2026-07-28-without-elicitation", "2025-11-25"])
def test_a_client_that_cannot_ask_is_refused_with_the_tools_error_never_changed_unasked(server, token, mode):
    session_id = new_session(server, token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    # 2025-11-25 has elicitation, but as a request from the server on a stream this stateless server never holds.
    answer = choose("switch") if mode == "legacy" else None
    result, asked = call_with(url, token, TO_DDR, answer=answer, mode=mode)

    assert asked == []
    assert (result.is_error, [item.text for item in result.content]) == (True, [CANNOT_ASK])
    assert session_mode(server, token, session_id) == "general"


def test_the_mcp_1_22_client_on_2025_06_18_gets_the_tools_error_and_the_mode_stays(server, token, mcp_client_python):
    session_id = new_session(server, token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    report = run_client(mcp_client_python(SDKS["1.22"]), "sdk_client.py", url, token)

    assert report["initialize"]["protocolVersion"] == "2025-06-18"
    change = report["change"]["result"]
    assert (change["isError"], [item["text"] for item in change["content"]]) == (True, [CANNOT_ASK])
    assert session_mode(server, token, session_id) == "general"
    assert mode_changes(server, token, session_id) == []


# --- requestState, as a client other than the SDK might send it --------------------------------------------


def call_request(token, arguments, **extra) -> tuple[str, dict]:
    """The body and headers of a 2026-07-28 agent_change_mode call by a client that declares elicitation."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", **CAPABLE}
    body = {
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "agent_change_mode", "arguments": arguments, "_meta": meta, **extra},
    }
    headers = {
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call", "Mcp-Name": "agent_change_mode",
    }
    return json.dumps(body), headers


def raw_call(url, token, arguments, **extra):
    body, headers = call_request(token, arguments, **extra)
    return requests.post(url, data=body, headers=headers, timeout=30)


def asked(url, token, arguments=TO_DDR):
    response = raw_call(url, token, arguments)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert (result["resultType"], list(result["inputRequests"])) == ("input_required", ["confirm"])
    assert result["inputRequests"]["confirm"]["method"] == "elicitation/create"
    return result["requestState"]


def answered(url, token, state, choice, arguments=TO_DDR):
    return raw_call(
        url, token, arguments, requestState=state,
        inputResponses={"confirm": {"action": "accept", "content": {"choice": choice}}},
    )


def refused_state(response, why):
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32602
    assert why in error["message"]


def test_a_tampered_or_foreign_request_state_is_refused_and_changes_nothing(server, token, database):
    session_id, other_id = new_session(server, token), new_session(server, token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    state = asked(url, token)
    payload, rest = state.split(":", 1)
    tampered = ("A" if payload[1] != "A" else "B").join((payload[:1], payload[2:])) + ":" + rest

    refused_state(answered(url, token, tampered, "switch"), "is not one this server issued")
    refused_state(answered(url, token, state + "x", "switch"), "is not one this server issued")
    # Another session's endpoint, another user, other arguments: signed, but not for this.
    refused_state(answered(f"{server.base}/mcp/sessions/{other_id}/", token, state, "switch"), "another user")
    dan = database["tokens"]["dan"]
    dans_url = f"{server.base}/mcp/sessions/{new_session(server, dan)}/"
    refused_state(answered(dans_url, dan, state, "switch"), "another user")
    refused_state(answered(url, token, state, "switch", {**TO_DDR, "branch": True}), "another user")
    # An answer that is none of the choices.
    response = raw_call(url, token, TO_DDR, requestState=state, inputResponses={"confirm": {"action": "accept"}})
    refused_state(response, "inputResponses.confirm answers the question")
    for each in (session_id, other_id):
        assert session_mode(server, token, each) == "general"
        assert mode_changes(server, token, each) == []

    # Refused, the question was not answered: its own state still answers it.
    assert answered(url, token, state, "switch").json()["result"]["isError"] is False
    assert session_mode(server, token, session_id) == "ddr_authoring"


def test_a_replayed_request_state_is_refused_and_changes_nothing(server, token):
    session_id = new_session(server, token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    state = asked(url, token)
    stayed = answered(url, token, state, "stay").json()["result"]
    assert (stayed["isError"], stayed["content"][0]["text"]) == (True, STAYED)

    replayed = answered(url, token, state, "switch")
    assert replayed.status_code == 200
    result = replayed.json()["result"]
    assert result["isError"] is True
    assert "was answered already (stay); an answer is taken once" in result["content"][0]["text"]
    assert session_mode(server, token, session_id) == "general"
    assert mode_changes(server, token, session_id) == []


def test_an_expired_request_state_is_refused():
    user, session = SimpleNamespace(pk=1), SimpleNamespace(pk="5d3d1c6e-0000-4000-8000-000000000000")
    bound = {"user": user, "session": session, "name": "agent_change_mode", "arguments": TO_DDR}
    result = confirmation.input_required({"id": "x", "question": "?", "expires_at": timezone.now()}, **bound)
    params = {"requestState": result["requestState"], "inputResponses": {"confirm": {"action": "decline"}}}
    with pytest.raises(JsonRpcError, match="has expired"):
        confirmation.read_answer(params, **bound)


@pytest.mark.django_db
def test_a_request_state_answers_its_question_until_the_questions_ten_minutes_are_over(
    client, alice, alice_session, settings, monkeypatch
):
    # The state had an expiry of its own, counted from its signature's time in whole seconds: a question asked at
    # x.9 s was refused over MCP as expired 9 min 59.5 s later, while the question (and REST) had half a second left.
    settings.MODE_CHANGE_CONFIRMATION = "user"
    clock = SimpleNamespace(now=1_900_000_000.9)
    monkeypatch.setattr(time, "time", lambda: clock.now)  # the signer's clock
    monkeypatch.setattr(timezone, "now", lambda: datetime.fromtimestamp(clock.now, UTC))  # the rows'

    def call(**extra):
        body, headers = call_request(alice.api_key, TO_DDR, **extra)
        content_type = headers.pop("Content-Type")
        wsgi_headers = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
        return client.post(f"/mcp/sessions/{alice_session.pk}/", body, content_type=content_type, **wsgi_headers)

    def answer(state):
        switch = {"confirm": {"action": "accept", "content": {"choice": "switch"}}}
        return call(requestState=state, inputResponses=switch)

    first, second = (call().json()["result"]["requestState"] for _ in range(2))
    clock.now += 599.5

    assert answer(first).json()["result"]["isError"] is False
    clock.now += 0.5  # ten minutes: the question has expired
    refused_state(answer(second), "has expired")


def test_the_sdk_raises_a_refused_state_as_the_servers_error(server, token):
    # What a client resuming a persisted InputRequiredResult with a stale or forged state is told.
    session_id = new_session(server, token)

    async def work():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with Client(
                streamable_http_client(f"{server.base}/mcp/sessions/{session_id}/", http_client=http),
                mode="2026-07-28", elicitation_callback=lambda context, params: None,
            ) as client:
                return await client.call_tool(
                    "agent_change_mode", TO_DDR, request_state="forged",
                    input_responses={"confirm": ElicitResult(action="accept", content={"choice": "switch"})},
                )

    with pytest.raises(BaseExceptionGroup) as raised:  # the Client's task group carries it out
        asyncio.run(work())
    assert raised.group_contains(MCPError, match="^This requestState is not one this server issued")
    assert session_mode(server, token, session_id) == "general"
