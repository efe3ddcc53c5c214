"""
The compatibility matrix of docs/mcp.md, run: the MCP clients people build agents on, each at the
pinned versions of its own virtualenv (tests/mcp_server/client_venvs.py), drive a live server (`make serve`) through the
scripts in tests/mcp_server/mcp_clients/, as a subprocess each. The `mcp` SDK at 1.22 (protocol 2025-06-18 at most), at 1.30
(what langchain-mcp-adapters allows) and at 2.3 (the suite's own); LangChain's adapters and the OpenAI Agents SDK
on mcp 1.30, without a model: list, call, a call of a tool the session's mode no longer serves, strict schema
conversion, resources.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..expected import seed_mcp_instructions
from ..servers import make_users, production_env, scratch_database, serving
from .live import mode_changes, new_session

SCRIPTS = Path(__file__).resolve().parent / "mcp_clients"
# The client venvs' names (tests/mcp_server/mcp_clients/requirements-<name>.txt); None is the suite's own Python (mcp 2.3).
SDKS = {"1.22": "mcp-1.22", "1.30": "frameworks-mcp-1.30", "2.3": None}
pytestmark = pytest.mark.either_database(reason="the clients meet the MCP layer, the same on either database")
CLIENT_USERS = ("sdk_1_22", "sdk_1_30", "sdk_2_3", "langchain", "agents")
UNSERVED = "Unknown tool: agent_hello_world. Mode 'ddr_authoring' of this session does not enable it."
CHANGED = {"success": True, "mode": "ddr_authoring", "branch": False, "reason": "The user wants a DDR."}


@pytest.fixture(scope="module")
def database():
    with scratch_database() as env:
        yield {"env": env, "tokens": make_users(env, *CLIENT_USERS)}


@pytest.fixture(scope="module")
def server(database):
    # Each client's user creates one session (through REST) and may create no other: its branch is over the limit.
    env = production_env(database["env"], SESSION_CREATE_RATE="1/day")
    with serving("make-serve", env, "WORKERS=1") as server:
        yield server


def mode_change_pairs(server, token, session_id):
    return [(change["fromMode"], change["toMode"]) for change in mode_changes(server, token, session_id)]


def run_client(python, script, *arguments):
    """What a client script printed (JSON), run by python against the live server."""
    finished = subprocess.run(
        [str(python), str(SCRIPTS / script), *arguments], capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    return json.loads(finished.stdout)


@pytest.mark.parametrize("sdk", SDKS)
def test_each_mcp_sdk_keeps_its_connection_through_refusals_and_is_told_the_new_mode(
    server, database, mcp_client_python, sdk
):
    token = database["tokens"][f"sdk_{sdk.replace('.', '_')}"]
    session_id = new_session(server, token)
    python = mcp_client_python(SDKS[sdk]) if SDKS[sdk] else sys.executable
    report = run_client(python, "sdk_client.py", f"{server.base}/mcp/sessions/{session_id}/", token)

    assert report["sdk"].startswith(sdk)
    # Each SDK is answered in the newest version it speaks: 1.22 knows nothing after 2025-06-18.
    assert report["initialize"]["protocolVersion"] == ("2025-06-18" if sdk == "1.22" else "2025-11-25")
    assert report["initialize"]["instructions"] == seed_mcp_instructions("general")
    names = [tool["name"] for tool in report["tools"]["result"]["tools"]]
    assert names == ["agent_change_mode", "agent_hello_world", "agent_list_modes"]
    assert report["prompts"] == {"error": {"code": -32601, "message": "Method not found: prompts/list."}}
    [template] = report["templates"]["result"]["resourceTemplates"]
    assert (template["uriTemplate"], template["mimeType"]) == ("modes://modes/{key}", "application/json")
    [content] = report["templated_read"]["result"]["contents"]
    assert json.loads(content["text"])["key"] == "ddr_authoring"

    change = report["change"]["result"]
    assert change["structuredContent"] == CHANGED
    assert [item["text"] for item in change["content"]] == [json.dumps(CHANGED, separators=(",", ":")),
                                                            seed_mcp_instructions("ddr_authoring")]
    # The tool list the model holds is stale: its call of agent_hello_world is refused, readably.
    assert report["unserved"] == {"error": {"code": -32602, "message": UNSERVED}}
    refused_branch = report["branch_over_limit"]["error"]
    assert refused_branch["code"] == -32000
    assert refused_branch["message"].startswith(
        "ModeChangeTool cannot start a new session now (branch=true): you have created as many sessions as 1/day "
        "allows. Expected available in "
    )
    assert refused_branch["data"]["retryAfter"] > 0
    # ... and the connection is still there.
    assert report["ping"] == {"result": {}}
    assert [tool["name"] for tool in report["tools_after"]["result"]["tools"]] == ["agent_change_mode", "agent_list_modes"]
    assert mode_change_pairs(server, token, session_id) == [("general", "ddr_authoring")]


def strict_parameters(report, framework):
    """Each converted tool's parameters, by name, once the framework has checked it is a strict schema."""
    converted = {}
    for tool in report["strict"]:
        if framework == "langchain":  # langchain_core's convert_to_openai_tool(tool, strict=True)
            tool = {"name": tool["function"]["name"], "strict": tool["function"]["strict"], **tool["function"]}
        assert tool["strict"] is True
        converted[tool["name"]] = tool["parameters"]
    return converted


@pytest.mark.parametrize("framework", ["langchain", "agents"])
def test_agent_frameworks_on_mcp_1_30_list_convert_call_and_read_and_survive_a_stale_tool_list(
    server, database, mcp_client_python, framework
):
    token = database["tokens"][framework]
    session_id = new_session(server, token)
    url = f"{server.base}/mcp/sessions/{session_id}/"
    report = run_client(mcp_client_python(SDKS["1.30"]), "frameworks_client.py", framework, url, token)

    assert report["tools"] == ["agent_change_mode", "agent_hello_world", "agent_list_modes"]
    for parameters in strict_parameters(report, framework).values():
        assert parameters["additionalProperties"] is False
        assert sorted(parameters["required"]) == sorted(parameters["properties"])
    texts = {"langchain": lambda: report["change"]["content"], "agents": lambda: report["change"]["output"]}[framework]()
    assert [item["text"] for item in texts] == [
        json.dumps(CHANGED, separators=(",", ":")), seed_mcp_instructions("ddr_authoring")
    ]
    if framework == "langchain":
        assert report["change"]["artifact"] == {"structured_content": CHANGED}
        # Raised from the tool as the JSON-RPC error it is, not as a broken transport (HTTPStatusError): an agent's
        # ToolNode(handle_tool_errors=True) hands the model this message.
        assert report["unserved"] == {"exception": f"McpError: {UNSERVED}"}
        assert report["after"]["status"] == "success"
    else:
        # The run goes on (no CancelledError). The SDK's default failure_error_function hides every error's text
        # from the model; an application's own passes ours on.
        assert report["unserved"] == {"output": "An error occurred while running the tool. Please try again."}
        assert report["unserved_readable"] == {"output": UNSERVED}
        assert json.loads(report["after"]["output"]["text"])["modes"][0]["key"] == "ddr_authoring"
    assert report["templates"] == ["modes://modes/{key}"]
    assert report["resource"]["mimetype"] == "application/json"
    assert json.loads(report["resource"]["data"])["key"] == "ddr_authoring"
    assert mode_change_pairs(server, token, session_id) == [("general", "ddr_authoring")]
