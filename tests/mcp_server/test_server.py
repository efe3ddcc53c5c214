"""
The MCP server, driven by the official `mcp` SDK client (unmocked) against the app served as in production
(`make serve`, Granian), on a scratch database of the suite's kind, SQLite or PostgreSQL; and, for the transport alone,
under ASGI (uvicorn) and runserver. Raw HTTP shows what the SDK hides: statuses, headers, malformed input.
"""

import asyncio
import json
import uuid

import httpx2
import pytest
import requests
from mcp import Client, ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

from ..expected import (
    CHANGE_MODE_SCHEMA,
    HELLO_WORLD_SCHEMA,
    LIST_MODES_SCHEMA,
    SEED_MARKDOWN,
    SEED_MODE_KEYS,
    SEED_MODES,
    seed_listing,
    seed_mcp_instructions,
)
from ..servers import make_users, production_env, run_django, scratch_database, serving
from .live import in_session, mode_changes, new_session

CHANGE_TO_DDR = {"mode": "ddr_authoring", "branch": False, "reason": "The user agreed."}

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


@pytest.fixture(scope="module")
def database():
    with scratch_database() as env:
        yield {"env": env, "tokens": make_users(env, "alice", "bob")}


@pytest.fixture(scope="module")
def server(database):
    # One worker, so that throttle counts (per process without Redis) are one count.
    env = production_env(database["env"], TOOL_INVOKE_RATE="1000/min", SESSION_CREATE_RATE="1000/min")
    with serving("make-serve", env, "WORKERS=1") as server:
        yield server


@pytest.fixture(scope="module")
def untouched_session(server, alice_token):
    """A session of alice's that only refused requests are sent to: it never changes mode."""
    return new_session(server, alice_token)


@pytest.fixture(scope="module")
def alice_token(database):
    return database["tokens"]["alice"]


@pytest.fixture(scope="module")
def bob_token(database):
    return database["tokens"]["bob"]


def run(coroutine):
    return asyncio.run(coroutine)


def post_jsonrpc(url, token, body, **headers):
    """A raw POST, as a client that is not the SDK might send it."""
    return requests.post(
        url,
        data=body if isinstance(body, (bytes, str)) else json.dumps(body),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        timeout=30,
    )


def dump(value):
    return value.model_dump(by_alias=True, exclude_none=True, mode="json")


# --- connecting, in both protocol versions -------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_each_version_is_answered_with_itself_and_the_default_modes_prompt(server, alice_token, version):
    async def nothing(session):
        return None

    opened, _ = run(in_session(f"{server.base}/mcp/", alice_token, nothing, version=version))
    if version == "2025-11-25":
        assert opened.protocol_version == "2025-11-25"
        assert opened.server_info.name == "aptix-modes"
    else:
        assert opened.supported_versions == ["2026-07-28"]
    assert opened.instructions == seed_mcp_instructions("general")


@pytest.mark.parametrize("mode", ["legacy", "auto", "2026-07-28"])
def test_the_high_level_client_lists_and_calls_in_every_mode(server, alice_token, mode):
    async def work():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {alice_token}"}, timeout=30) as http:
            async with Client(streamable_http_client(f"{server.base}/mcp/", http_client=http), mode=mode) as client:
                tools = await client.list_tools()
                result = await client.call_tool("agent_hello_world", {"name": "Ada"})
                return client.protocol_version, [tool.name for tool in tools.tools], result

    negotiated, names, result = run(work())
    assert negotiated == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert names == ["agent_hello_world", "agent_list_modes"]
    assert result.is_error is False
    assert result.structured_content["message"] == "Hello, Ada! Welcome to Aptix."


def test_a_session_endpoints_instructions_are_its_current_modes_prompt(server, alice_token):
    session_id = new_session(server, alice_token, mode="workflow_authoring")

    async def nothing(session):
        return None

    for version in ("2025-11-25", "2026-07-28"):
        opened, _ = run(in_session(f"{server.base}/mcp/sessions/{session_id}/", alice_token, nothing, version=version))
        assert opened.instructions == seed_mcp_instructions("workflow_authoring")


@pytest.mark.parametrize(
    "asked, answered",
    [("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
     ("2024-11-05", "2025-11-25"), ("2030-01-01", "2025-11-25")],
)
def test_initialize_settles_the_clients_version_or_offers_the_servers_newest(server, alice_token, asked, answered):
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    }
    response = post_jsonrpc(f"{server.base}/mcp/", alice_token, body)
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == answered


@pytest.mark.parametrize("asked", ["2026-07-28", "2025-11-25"])
def test_initialize_in_a_2026_07_28_request_is_no_method_of_that_version(server, alice_token, asked):
    # It was answered as a handshake that settled 2026-07-28, a version no handshake reaches, whatever version its
    # params asked for. 2026-07-28 has server/discover instead; the SDK's own server answers it so too.
    initialize = {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}
    body, headers = modern("initialize", initialize)
    response = post_jsonrpc(f"{server.base}/mcp/", alice_token, body, **headers)
    assert (response.status_code, response.json()["error"]["code"]) == (404, -32601)
    assert "server/discover" in response.json()["error"]["message"]


def test_2025_03_26_is_answered_without_what_2025_06_18_added(server, alice_token):
    # No structuredContent and no titles; a request without the version header is in 2025-03-26.
    def answer(method, params=None, **headers):
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        return post_jsonrpc(f"{server.base}/mcp/", alice_token, body, **headers).json()["result"]

    initialize = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}
    call = {"name": "agent_hello_world", "arguments": {"name": "Ada"}}
    for headers in ({}, {"MCP-Protocol-Version": "2025-03-26"}):
        assert answer("initialize", initialize)["serverInfo"] == {"name": "aptix-modes", "version": "1.0.0"}
        called = answer("tools/call", call, **headers)
        assert (set(called), json.loads(called["content"][0]["text"])["message"]) == (
            {"content", "isError"}, "Hello, Ada! Welcome to Aptix."
        )
        assert all("title" not in resource for resource in answer("resources/list", **headers)["resources"])
        assert "title" not in answer("resources/templates/list", **headers)["resourceTemplates"][0]
    modern_call = answer("tools/call", call, **{"MCP-Protocol-Version": "2025-06-18"})
    assert modern_call["structuredContent"]["message"] == "Hello, Ada! Welcome to Aptix."
    assert answer("resources/templates/list", **{"MCP-Protocol-Version": "2025-06-18"})["resourceTemplates"][0]["title"]


def test_a_2025_03_26_batch_is_answered_in_one_array_in_order(server, alice_token, untouched_session):
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/call", "params": {"name": "agent_time_travel"}},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/templates/list"},
        {"id": 4, "method": "ping"},
        [{"jsonrpc": "2.0", "id": 5, "method": "ping"}],
    ]
    url = f"{server.base}/mcp/sessions/{untouched_session}/"
    response = post_jsonrpc(url, alice_token, batch)
    assert response.status_code == 200
    ping, unserved, templates, not_json_rpc, nested = response.json()
    assert ping == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert (unserved["id"], unserved["error"]["code"]) == ("two", -32602)
    assert templates["result"]["resourceTemplates"][0]["uriTemplate"] == "modes://modes/{key}"
    assert (not_json_rpc["id"], not_json_rpc["error"]["code"]) == (4, -32600)
    assert (nested["id"], nested["error"]["code"]) == (None, -32600)
    only_notifications = post_jsonrpc(url, alice_token, [{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert (only_notifications.status_code, only_notifications.content) == (202, b"")
    # 2025-06-18 took batches out.
    later = post_jsonrpc(url, alice_token, batch[:1], **{"MCP-Protocol-Version": "2025-06-18"})
    assert (later.status_code, later.json()["error"]["code"]) == (400, -32600)
    assert mode_changes(server, alice_token, untouched_session) == []


def test_resource_templates_list_the_mode_uri_and_a_uri_made_from_it_reads_in_2026_07_28(server, alice_token):
    async def templates_and_read(session):
        listed = await session.list_resource_templates()
        [template] = listed.resource_templates
        return listed, await session.read_resource(template.uri_template.replace("{key}", "workflow_authoring"))

    _, (listed, read) = run(in_session(f"{server.base}/mcp/", alice_token, templates_and_read))
    assert [dump(template) for template in listed.resource_templates] == [
        {
            "uriTemplate": "modes://modes/{key}",
            "name": "mode",
            "title": "Mode",
            "description": "One mode of the catalog, by its key, as JSON (as GET /api/modes/<key>/ gives it).",
            "mimeType": "application/json",
        }
    ]
    assert json.loads(read.contents[0].text)["key"] == "workflow_authoring"


# --- tools at /mcp/ ------------------------------------------------------------------------------------


def test_the_sessionless_endpoint_lists_the_tools_that_need_no_session_from_the_registry(server, alice_token):
    async def list_tools(session):
        return await session.list_tools()

    _, tools = run(in_session(f"{server.base}/mcp/", alice_token, list_tools))
    assert [dump(tool) for tool in tools.tools] == [
        {
            "name": "agent_hello_world",
            "description": HELLO_WORLD_SCHEMA["description"],
            "inputSchema": HELLO_WORLD_SCHEMA["parameters"],
            "annotations": READ_ONLY,
        },
        {
            "name": "agent_list_modes",
            "description": LIST_MODES_SCHEMA["description"],
            "inputSchema": LIST_MODES_SCHEMA["parameters"],
            "annotations": READ_ONLY,
        },
    ]


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_call_answers_the_result_as_json_text_and_as_structured_content(server, alice_token, version):
    async def call(session):
        return await session.call_tool("agent_list_modes", {"filter": "ddr", "includeExamples": True})

    _, result = run(in_session(f"{server.base}/mcp/", alice_token, call, version=version))
    assert result.is_error is False
    assert [content.type for content in result.content] == ["text"]
    assert json.loads(result.content[0].text) == result.structured_content
    # Another test of this module declares a tool, a new catalog revision: which one this call sees depends on order.
    assert result.structured_content["modes"] == seed_listing("ddr_authoring", include_examples=True)["modes"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"name": "  "}, "HelloWorldTool requires a non-empty 'name' string."),
        ({}, "HelloWorldTool requires a non-empty 'name' string."),
        ({"name": "Ada", "mood": "happy"}, "HelloWorldTool does not accept 'mood'; its arguments are name."),
    ],
)
def test_arguments_the_tool_rejects_are_an_error_result_with_its_message(server, alice_token, arguments, message):
    async def call(session):
        return await session.call_tool("agent_hello_world", arguments)

    _, result = run(in_session(f"{server.base}/mcp/", alice_token, call))
    assert result.is_error is True
    assert [content.text for content in result.content] == [message]
    assert result.structured_content is None


@pytest.mark.parametrize(
    "name, message",
    [
        ("agent_time_travel", "Unknown tool: agent_time_travel."),
        (
            "agent_change_mode",
            "Unknown tool: agent_change_mode needs a session; connect to /mcp/sessions/<session id>/ to call it.",
        ),
    ],
)
def test_a_tool_this_endpoint_does_not_serve_is_a_json_rpc_error(server, alice_token, name, message):
    async def call(session):
        with pytest.raises(MCPError) as caught:
            await session.call_tool(name, {})
        return caught.value

    _, error = run(in_session(f"{server.base}/mcp/", alice_token, call))
    assert (error.error.code, error.error.message) == (-32602, message)


# --- a session's endpoint ----------------------------------------------------------------------------------


def test_a_session_lists_exactly_what_its_mode_enables_and_follows_a_mode_change(server, alice_token):
    session_id = new_session(server, alice_token)
    url = f"{server.base}/mcp/sessions/{session_id}/"

    async def change_and_list(session):
        before = await session.list_tools()
        changed = await session.call_tool(
            "agent_change_mode", {"mode": "ddr_authoring", "branch": False, "reason": "The user wants a DDR."}
        )
        after = await session.list_tools()
        return before, changed, after

    _, (before, changed, after) = run(in_session(url, alice_token, change_and_list))
    assert [tool.name for tool in before.tools] == ["agent_change_mode", "agent_hello_world", "agent_list_modes"]
    change_mode = dump(before.tools[0])
    assert change_mode["inputSchema"]["properties"]["mode"]["enum"] == SEED_MODE_KEYS
    assert change_mode["annotations"]["readOnlyHint"] is False
    assert change_mode["description"] == CHANGE_MODE_SCHEMA["description"]
    assert changed.is_error is False
    assert changed.structured_content == {
        "success": True, "mode": "ddr_authoring", "branch": False, "reason": "The user wants a DDR."
    }
    # TUL-007's JSON first, then the new mode's instructions and block: those read at connection are stale.
    assert [json.loads(changed.content[0].text), changed.content[1].text] == [
        changed.structured_content, seed_mcp_instructions("ddr_authoring")
    ]
    # ddr_authoring enables agent_list_modes (and tools nobody declared, which are not served).
    assert [tool.name for tool in after.tools] == ["agent_change_mode", "agent_list_modes"]
    [audit] = mode_changes(server, alice_token, session_id)
    assert {key: audit[key] for key in ("fromMode", "toMode", "reason", "branch", "changedBy")} == {
        "fromMode": "general", "toMode": "ddr_authoring", "reason": "The user wants a DDR.", "branch": False,
        "changedBy": "alice",
    }


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            {"mode": "poetry", "branch": False, "reason": "x"},
            "Unknown mode key 'poetry'. Valid keys: general, ddr_authoring, workflow_authoring.",
        ),
        (
            {"mode": "ddr_authoring", "branch": False, "reason": " "},
            "ModeChangeTool requires a non-empty 'reason' string explaining why the mode change is needed.",
        ),
        ({"mode": "ddr_authoring", "reason": "x"}, "ModeChangeTool requires a 'branch' boolean flag."),
    ],
    ids=["unknown-mode", "empty-reason", "no-branch"],
)
def test_a_mode_change_the_tool_refuses_is_an_error_result_and_changes_nothing(server, alice_token, arguments, message):
    # The listed schema rules these out already (an enum, required fields); the tool refuses them all the same.
    session_id = new_session(server, alice_token)

    async def call(session):
        return await session.call_tool("agent_change_mode", arguments)

    _, result = run(in_session(f"{server.base}/mcp/sessions/{session_id}/", alice_token, call))
    assert (result.is_error, [content.text for content in result.content]) == (True, [message])
    assert mode_changes(server, alice_token, session_id) == []


def test_a_mode_change_naming_another_session_is_refused_and_naming_this_one_is_fine(server, alice_token):
    session_id, other_id = new_session(server, alice_token), new_session(server, alice_token)
    change = {"mode": "ddr_authoring", "branch": False, "reason": "The user agreed."}

    async def calls(session):
        other = await session.call_tool("agent_change_mode", {**change, "sessionId": other_id})
        same = await session.call_tool("agent_change_mode", {**change, "sessionId": session_id})
        return other, same

    _, (other, same) = run(in_session(f"{server.base}/mcp/sessions/{session_id}/", alice_token, calls))
    assert other.is_error is True
    assert other.content[0].text == (
        f"This MCP endpoint serves session {session_id}; agent_change_mode cannot work on another session here."
    )
    assert same.is_error is False
    assert mode_changes(server, alice_token, other_id) == []
    assert len(mode_changes(server, alice_token, session_id)) == 1


def test_a_branch_over_mcp_is_an_audited_change_with_a_new_session(server, alice_token):
    session_id = new_session(server, alice_token)

    async def call(session):
        return await session.call_tool(
            "agent_change_mode", {"mode": "workflow_authoring", "branch": True, "reason": "Start the workflow apart."}
        )

    _, result = run(in_session(f"{server.base}/mcp/sessions/{session_id}/", alice_token, call))
    branch_id = result.structured_content["branchSessionId"]
    [audit] = mode_changes(server, alice_token, session_id)
    assert (audit["toMode"], audit["branch"], audit["branchSessionId"]) == ("workflow_authoring", True, branch_id)


# --- resources -----------------------------------------------------------------------------------------------


def test_resources_are_the_catalog_listing_and_each_mode_as_rest_gives_it(server, alice_token):
    async def read_all(session):
        listed = await session.list_resources()
        catalog = await session.read_resource("modes://catalog")
        general = await session.read_resource("modes://modes/general")
        return listed, catalog, general

    _, (listed, catalog, general) = run(in_session(f"{server.base}/mcp/", alice_token, read_all))
    assert [(str(resource.uri), resource.mime_type) for resource in listed.resources] == [
        ("modes://catalog", "text/markdown"),
        ("modes://modes/general", "application/json"),
        ("modes://modes/ddr_authoring", "application/json"),
        ("modes://modes/workflow_authoring", "application/json"),
    ]
    assert catalog.contents[0].text == SEED_MARKDOWN
    detail = json.loads(general.contents[0].text)
    assert {key: detail[key] for key in detail if key not in ("createdAt", "updatedAt")} == SEED_MODES["general"]


def test_an_unknown_resource_is_a_json_rpc_error(server, alice_token):
    async def read(session):
        with pytest.raises(MCPError) as caught:
            await session.read_resource("modes://modes/poetry")
        return caught.value

    _, error = run(in_session(f"{server.base}/mcp/", alice_token, read))
    assert error.error.code == -32602  # the SDK 2.3 client speaks 2026-07-28, where SEP-2164 made it invalid params
    assert error.error.message == (
        "Resource not found: Unknown mode key 'poetry'. Valid keys: general, ddr_authoring, workflow_authoring."
    )


# --- authentication and ownership ----------------------------------------------------------------------------


@pytest.mark.parametrize("authorization", [None, "Bearer " + "0" * 40, "Bearer not-a-token", "Token abc"])
def test_no_token_or_a_bad_one_is_401_with_a_bearer_challenge(server, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    response = requests.post(
        f"{server.base}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
    )
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_the_sdk_client_gets_an_error_for_a_bad_token(server):
    async def nothing(session):
        return None

    with pytest.raises(ExceptionGroup) as caught:
        run(in_session(f"{server.base}/mcp/", "0" * 40, nothing))
    errors = caught.value.exceptions[0].exceptions
    assert [(error.error.code, error.error.message) for error in errors] == [(-32600, "Invalid token.")]


def test_another_users_session_is_the_same_404_as_an_unknown_one_and_changes_nothing(server, alice_token, bob_token):
    bobs = new_session(server, bob_token)
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "agent_change_mode", "arguments": {"mode": "ddr_authoring", "branch": False, "reason": "x"}},
    }
    answers = {
        session_id: post_jsonrpc(f"{server.base}/mcp/sessions/{session_id}/", alice_token, body)
        for session_id in (bobs, str(uuid.uuid4()), "not-a-session")
    }
    for session_id, response in answers.items():
        assert response.status_code == 404
        assert response.json() == {
            "jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": f"No session {session_id} was found for you."}
        }
    assert mode_changes(server, bob_token, bobs) == []


# --- bad input ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, status, code",
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', 400, -32700),
        (b"[]", 400, -32600),
        (b'{"id": 1, "method": "tools/list"}', 400, -32600),
        (b'{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', 400, -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}', 400, -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": '
         b'{"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}}', 400, -32022),
    ],
    ids=["not-json", "empty-batch", "no-jsonrpc", "bool-id", "params-list", "unsupported-version"],
)
@pytest.mark.parametrize("version", [None, "2025-06-18", "2025-11-25"])
def test_a_message_that_cannot_be_read_is_a_4xx_json_rpc_error_in_every_version_and_changes_nothing(
    server, alice_token, untouched_session, body, status, code, version
):
    # As the SDK's own server answers what it cannot read (HTTP 200 is for answers to messages it read).
    session_id = untouched_session
    headers = {"MCP-Protocol-Version": version} if version else {}
    response = post_jsonrpc(f"{server.base}/mcp/sessions/{session_id}/", alice_token, body, **headers)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert isinstance(response.json()["error"]["message"], str)
    assert mode_changes(server, alice_token, session_id) == []


# method, params, the error's code, and its code and HTTP status in 2026-07-28
READ_BUT_REFUSED = {
    "unknown-method": ("prompts/get", {}, -32601, (-32601, 404)),
    "arguments-list": (
        "tools/call", {"name": "agent_change_mode", "arguments": ["ddr_authoring"]}, -32602, (-32602, 400)
    ),
    "name-not-text": ("tools/call", {"name": 5}, -32602, (-32602, 400)),
    "unserved-tool": ("tools/call", {"name": "agent_time_travel", "arguments": {}}, -32602, (-32602, 400)),
    "uri-not-text": ("resources/read", {"uri": 5}, -32602, (-32602, 400)),
    # SEP-2164 retired -32002 in 2026-07-28.
    "unknown-resource": ("resources/read", {"uri": "modes://modes/poetry"}, -32002, (-32602, 400)),
}


@pytest.mark.parametrize("refused", READ_BUT_REFUSED, ids=list(READ_BUT_REFUSED))
@pytest.mark.parametrize("version", [None, "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
def test_an_error_answering_a_message_that_was_read_is_http_200_before_2026_07_28(
    server, alice_token, untouched_session, refused, version
):
    method, params, code, in_2026 = READ_BUT_REFUSED[refused]
    session_id = untouched_session
    if version == "2026-07-28":
        body, headers = modern(method, params, request_id="r-1")
    else:
        body = {"jsonrpc": "2.0", "id": "r-1", "method": method, "params": params}
        headers = {"MCP-Protocol-Version": version} if version else {}
    response = post_jsonrpc(f"{server.base}/mcp/sessions/{session_id}/", alice_token, body, **headers)
    assert (response.json()["error"]["code"], response.status_code) == (
        in_2026 if version == "2026-07-28" else (code, 200)
    ), response.text
    assert response.json()["id"] == body["id"]
    assert mode_changes(server, alice_token, session_id) == []


def test_an_error_answers_the_requests_id_or_null_when_it_has_no_valid_one(server, alice_token):
    url = f"{server.base}/mcp/"
    assert post_jsonrpc(url, alice_token, {"jsonrpc": "2.0", "id": "r-9", "method": "nope"}).json()["id"] == "r-9"
    assert post_jsonrpc(url, alice_token, {"jsonrpc": "2.0", "id": True, "method": "ping"}).json()["id"] is None
    assert post_jsonrpc(url, alice_token, {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}).json()["id"] is None


def test_an_oversized_body_is_413(server, alice_token):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "x" * 70000}})
    response = post_jsonrpc(f"{server.base}/mcp/", alice_token, body)
    assert response.status_code == 413
    assert response.json()["error"]["message"].endswith("bytes; the limit is 65536.")


def test_a_notification_is_accepted_with_no_body(server, alice_token):
    response = post_jsonrpc(f"{server.base}/mcp/", alice_token, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (response.status_code, response.content) == (202, b"")


def test_get_and_delete_are_405_since_the_server_keeps_no_stream_or_session(server, alice_token):
    for method in ("GET", "DELETE"):
        response = requests.request(method, f"{server.base}/mcp/", headers={"Authorization": f"Bearer {alice_token}"})
        # GET is the app's 405; nginx answers DELETE, which the service serves nowhere, itself.
        allowed = response.headers["Allow"].split(", ")
        assert (response.status_code, method in allowed, "POST" in allowed) == (405, False, True)


def test_the_url_works_without_its_trailing_slash(server, alice_token):
    response = post_jsonrpc(f"{server.base}/mcp", alice_token, {"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert response.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_a_mismatched_version_header_is_refused(server, alice_token):
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    }
    response = post_jsonrpc(f"{server.base}/mcp/", alice_token, body, **{"MCP-Protocol-Version": "2025-11-25"})
    assert (response.status_code, response.json()["error"]["code"]) == (400, -32020)


# --- throttling ---------------------------------------------------------------------------------------------


def test_a_throttled_call_is_a_json_rpc_error_answering_it_http_200_before_2026_07_28_and_429_in_it(
    database, alice_token
):
    # Before 2026-07-28 a client takes any status but 200 for a broken transport; the error carries the call's id,
    # so the client matches it to the call, and retryAfter, which 2026-07-28 also sends as Retry-After with its 429.
    call = {"jsonrpc": "2.0", "id": "c-1", "method": "tools/call", "params": {"name": "agent_list_modes"}}
    handshake = {"MCP-Protocol-Version": "2025-11-25"}
    with serving("make-serve", production_env(database["env"], TOOL_INVOKE_RATE="2/day"), "WORKERS=1") as slow:
        url = f"{slow.base}/mcp/"
        answers = [post_jsonrpc(url, alice_token, call, **handshake) for _ in range(3)]
        body, headers = modern("tools/call", {"name": "agent_list_modes"}, request_id="c-2")
        in_2026 = post_jsonrpc(url, alice_token, body, **headers)
        listing = post_jsonrpc(url, alice_token, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **handshake)
    assert [response.status_code for response in answers] == [200, 200, 200]
    assert [set(response.json()) - {"jsonrpc", "id"} for response in answers] == [{"result"}, {"result"}, {"error"}]
    throttled = answers[2].json()
    assert throttled["id"] == "c-1"
    assert throttled["error"]["code"] == -32000
    assert throttled["error"]["message"].startswith("Request was throttled. Expected available in ")
    assert throttled["error"]["data"]["retryAfter"] > 0
    assert "Retry-After" not in answers[2].headers
    assert in_2026.status_code == 429
    assert (in_2026.json()["id"], in_2026.json()["error"]["code"]) == ("c-2", -32000)
    assert int(in_2026.headers["Retry-After"]) == in_2026.json()["error"]["data"]["retryAfter"] > 0
    assert listing.status_code == 200 and "result" in listing.json(), "only tool calls are throttled"


# --- ASGI and runserver ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["uvicorn", "runserver"])
def test_the_mcp_server_works_under_asgi_and_runserver(database, alice_token, kind):
    # Under make serve (Granian, WSGI), every other test of this module.
    env = {**database["env"], "DEBUG": "1"} if kind == "runserver" else production_env(database["env"])

    async def call(session):
        return await session.call_tool("agent_list_modes", {})

    with serving(kind, env) as other:
        opened, result = run(in_session(f"{other.base}/mcp/", alice_token, call))
    assert opened.instructions == seed_mcp_instructions("general")
    assert [mode["key"] for mode in result.structured_content["modes"]] == SEED_MODE_KEYS


# --- what 2026-07-28 repeats in headers must agree with the body --------------------------------------------


def modern(method, params, request_id=1):
    """A 2026-07-28 request body, and the headers the SDK sends with it."""
    body = {
        "jsonrpc": "2.0", "id": request_id, "method": method,
        "params": {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    }
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    named = params.get("uri") if method == "resources/read" else params.get("name")
    if method in ("tools/call", "resources/read") and isinstance(named, str):
        headers["Mcp-Name"] = named
    return body, headers


def test_headers_that_disagree_with_the_body_are_refused_and_change_nothing(server, alice_token):
    session_id = new_session(server, alice_token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    body, headers = modern("tools/call", {"name": "agent_change_mode", "arguments": CHANGE_TO_DDR})
    for name, value in [("Mcp-Method", "tools/list"), ("Mcp-Name", "agent_list_modes"), ("MCP-Protocol-Version", None)]:
        sent = {key: val for key, val in {**headers, name: value}.items() if val is not None}
        response = post_jsonrpc(url, alice_token, body, **sent)
        assert (response.status_code, response.json()["error"]["code"]) == (400, -32020), name
    assert mode_changes(server, alice_token, session_id) == []
    agreeing = post_jsonrpc(url, alice_token, body, **headers)
    assert agreeing.json()["result"]["structuredContent"]["mode"] == "ddr_authoring"
    assert len(mode_changes(server, alice_token, session_id)) == 1


def test_an_answer_sent_to_a_tool_that_asks_nothing_is_ignored_as_in_older_versions(server, alice_token):
    # It was refused as agent_change_mode's answer, telling the client to call agent_change_mode again.
    answer = {"inputResponses": {"confirm": {"action": "accept", "content": {"choice": "switch"}}}}
    body, headers = modern("tools/call", {"name": "agent_list_modes", "arguments": {}, **answer})
    response = post_jsonrpc(f"{server.base}/mcp/", alice_token, body, **headers)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["isError"] is False


def test_an_unsupported_version_header_is_400(server, alice_token):
    response = post_jsonrpc(
        f"{server.base}/mcp/", alice_token, {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        **{"MCP-Protocol-Version": "1999-01-01"},
    )
    assert (response.status_code, response.json()["error"]["code"]) == (400, -32022)


def test_a_tools_call_sent_as_a_notification_runs_nothing(server, alice_token):
    session_id = new_session(server, alice_token)
    notification = {
        "jsonrpc": "2.0", "method": "tools/call", "params": {"name": "agent_change_mode", "arguments": CHANGE_TO_DDR}
    }
    response = post_jsonrpc(f"{server.base}/mcp/sessions/{session_id}/", alice_token, notification)
    assert (response.status_code, response.content) == (202, b"")
    assert mode_changes(server, alice_token, session_id) == []


# A write to the declared tools through the services: one revision, published at once.
DECLARED_TOOLS = """
from modes.models import DeclaredTool
from modes.services import catalog_change
with catalog_change(by=None):
    DeclaredTool.objects.{write}
"""


@pytest.fixture
def declared_workflow_registry(database):
    """agent_workflow_registry declared as a client tool for one test, then removed from the module's database."""
    declare = "create(name='agent_workflow_registry', description='Workflows, in the client.')"
    run_django(database["env"], DECLARED_TOOLS.format(write=declare))
    yield
    run_django(database["env"], DECLARED_TOOLS.format(write="filter(name='agent_workflow_registry').delete()"))


@pytest.mark.usefixtures("declared_workflow_registry")
def test_a_declared_tool_is_not_served_here_since_the_agents_client_runs_it(server, alice_token):
    session_id = new_session(server, alice_token)  # general lists agent_workflow_registry

    async def call(session):
        listed = await session.list_tools()
        with pytest.raises(MCPError) as caught:
            await session.call_tool("agent_workflow_registry", {})
        return listed, caught.value

    for url in (f"{server.base}/mcp/", f"{server.base}/mcp/sessions/{session_id}/"):
        _, (listed, error) = run(in_session(url, alice_token, call))
        assert "agent_workflow_registry" not in [tool.name for tool in listed.tools]
        assert (error.error.code, error.error.message) == (
            -32602, "Unknown tool: agent_workflow_registry is run by the agent's client, not by this server."
        )


def test_the_sessions_own_id_in_any_form_is_this_session(server, alice_token):
    session_id = new_session(server, alice_token)

    async def call(session):
        return await session.call_tool("agent_change_mode", {**CHANGE_TO_DDR, "sessionId": session_id.upper()})

    _, result = run(in_session(f"{server.base}/mcp/sessions/{session_id}/", alice_token, call))
    assert result.is_error is False


def test_an_unknown_mcp_url_is_a_json_404(server, alice_token):
    response = post_jsonrpc(f"{server.base}/mcp/elsewhere/", alice_token, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "No MCP endpoint has this URL."


# --- web pages of other origins ------------------------------------------------------------------------


def test_the_sdk_client_is_refused_from_a_foreign_page_and_changes_nothing(server, alice_token):
    session_id = new_session(server, alice_token)

    async def change(session):
        return await session.call_tool("agent_change_mode", CHANGE_TO_DDR)

    async def from_page(origin):
        headers = {"Authorization": f"Bearer {alice_token}", "Origin": origin}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(f"{server.base}/mcp/sessions/{session_id}/", http_client=http) as (r, w):
                async with ClientSession(r, w) as session:
                    await session.discover()
                    return await change(session)

    with pytest.raises(ExceptionGroup) as caught:
        run(from_page("https://evil.example"))
    errors = caught.value.exceptions[0].exceptions
    assert [error.error.code for error in errors] == [-32600]
    assert "origin" in errors[0].error.message
    assert mode_changes(server, alice_token, session_id) == []

    # The server's own origin, as a page it served would send it, is served.
    result = run(from_page(server.base))
    assert result.structured_content["mode"] == "ddr_authoring"


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1:1"])
def test_a_raw_request_from_a_foreign_origin_is_403_with_a_json_rpc_error(server, alice_token, origin):
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    response = post_jsonrpc(f"{server.base}/mcp/", alice_token, body, Origin=origin)
    assert response.status_code == 403
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Requests from this page's origin are not accepted. Serve the page from this server's "
            "origin, or add its origin to MCP_ALLOWED_ORIGINS.",
        },
    }
