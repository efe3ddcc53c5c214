"""
Property-based: any JSON-RPC message, well formed or not, in any protocol version, with or without the headers its
version asks for, gets an MCP answer (in this process, through Django's handler): a status the transport allows and
a JSON-RPC body; never a server error, nor an exception answered as an internal error. Most cases are what a client
means to send, one part of them spoiled, so that they reach the tools as well as the protocol's checks. The cases
are the same at every run (derandomize); more of them:
MCP_FUZZ_EXAMPLES=3000 make test-sqlite PYTEST_ARGS="tests/mcp_server/test_fuzz.py".
"""

import json
import os

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_server.protocol import INTERNAL_ERROR, PROTOCOL_VERSIONS, STATELESS_VERSION, VERSION_META

METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/templates/list",
           "resources/read", "server/discover", "notifications/initialized"]
TOOLS = ["agent_list_modes", "agent_change_mode", "agent_hello_world"]
URIS = ["modes://catalog", "modes://modes/general", "modes://modes/nothing"]
STATUSES = {200, 202, 400, 404, 429}

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
anything = st.recursive(scalars, lambda children: st.lists(children, max_size=3) | st.dictionaries(
    st.text(max_size=8), children, max_size=3), max_leaves=8)
ARGUMENTS = {
    "agent_change_mode": st.fixed_dictionaries({
        "mode": st.sampled_from(["general", "ddr_authoring", "workflow_authoring"]), "branch": st.booleans(),
        "reason": st.text(min_size=1, max_size=30),
    }),
    "agent_list_modes": st.fixed_dictionaries({}, optional={"filter": st.text(max_size=10), "includeExamples": st.booleans()}),
    "agent_hello_world": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=20)}),
}


@st.composite
def requests(draw):
    """(body, headers): a request as its version has it, then perhaps one part of it replaced by anything."""
    version, method = draw(st.sampled_from(PROTOCOL_VERSIONS)), draw(st.sampled_from(METHODS))
    params = {}
    if method == "tools/call":
        tool = draw(st.sampled_from(TOOLS))
        params = {"name": tool, "arguments": draw(ARGUMENTS[tool])}
    elif method == "resources/read":
        params = {"uri": draw(st.sampled_from(URIS))}
    elif method == "initialize":
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
    headers = {"MCP-Protocol-Version": version}
    if version == STATELESS_VERSION:
        params["_meta"] = {VERSION_META: version}
        headers["Mcp-Method"] = method
        if "name" in params or "uri" in params:
            headers["Mcp-Name"] = params.get("name") or params["uri"]
    body = {"jsonrpc": "2.0", "id": draw(st.integers(0, 10**6)), "method": method, "params": params}
    spoiled = draw(st.sampled_from(["nothing", "nothing", "body", "params", "argument", "header", "batch"]))
    if spoiled == "body":
        body[draw(st.sampled_from(["jsonrpc", "id", "method", "params"]))] = draw(anything)
    elif spoiled == "params" and params:
        params[draw(st.sampled_from(sorted(params)))] = draw(anything)
    elif spoiled == "argument" and "arguments" in params:
        params["arguments"][draw(st.text(max_size=15) | st.sampled_from(["mode", "reason", "branch", "name"]))] = draw(anything)
    elif spoiled == "header":
        name = draw(st.sampled_from(sorted(headers)))
        value = draw(st.none() | st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=20))
        headers = {**headers, name: value} if value is not None else {k: v for k, v in headers.items() if k != name}
    elif spoiled == "batch":
        body = [body, *draw(st.lists(anything, max_size=2))]
    return body, headers


@pytest.fixture
def mcp(alice, alice_session, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"tool-invoke": "100000/min", "session-create": "100000/min", "token": "100000/min"},
    }
    return Client(HTTP_AUTHORIZATION=f"Bearer {alice.api_key}"), ["/mcp/", f"/mcp/sessions/{alice_session.pk}/"]


@settings(max_examples=int(os.environ.get("MCP_FUZZ_EXAMPLES", "300")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], database=None)
@given(request=requests(), where=st.sampled_from([0, 1]))
def test_any_message_gets_a_json_rpc_answer_never_a_server_error(mcp, request, where):
    client, urls = mcp
    body, headers = request
    extra = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
    response = client.post(urls[where], json.dumps(body), content_type="application/json",
                           HTTP_ACCEPT="application/json, text/event-stream", **extra)
    assert response.status_code in STATUSES, (response.status_code, response.content[:500])
    if response.status_code != 202:
        answer = json.loads(response.content)
        for reply in answer if isinstance(answer, list) else [answer]:
            assert reply["jsonrpc"] == "2.0" and ("result" in reply) != ("error" in reply), reply
            assert reply.get("error", {}).get("code") != INTERNAL_ERROR, reply  # an exception the server caught
