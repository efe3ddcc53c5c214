"""
The mode graph over MCP (issue 29), with the official `mcp` SDK client against `make serve` on a scratch database
of the suite's kind: a switch the graph forbids is an error result that changes nothing, an allowed one works,
and tools/list's agent_change_mode lists exactly the modes the session's current mode may switch to. A refused
switch is recorded as a refusal.
"""

import asyncio

import pytest
import requests

from ..servers import make_users, production_env, run_django, run_django_json, scratch_database, serving
from .live import in_session, mode_changes, new_session

# One revision, published (review and review_notes name each other: either alone breaks modes.E010).
GRAPH = """
from modes.models import AgentMode
from modes.services import catalog_change
with catalog_change(by=None):
    for key, policy in [
        ("review", dict(switch_targets=["general", "review_notes"])),
        ("review_notes", dict(switch_targets=["review"])),
        ("deploy", dict(llm_can_enter=False)),
    ]:
        AgentMode.objects.create(key=key, display_name=key.title(), when_to_use=f"Use this mode for {key}.", **policy)
"""


@pytest.fixture(scope="module")
def server():
    with scratch_database() as env:
        tokens = make_users(env, "alice")
        run_django(env, GRAPH)
        with serving("make-serve", production_env(env, TOOL_INVOKE_RATE="1000/min"), "WORKERS=1") as server:
            server.token, server.env = tokens["alice"], env
            yield server


def change(mode):
    return {"mode": mode, "branch": False, "reason": "The user agreed."}


def enum_of(tools):
    [change_mode] = [tool for tool in tools.tools if tool.name == "agent_change_mode"]
    return change_mode.input_schema["properties"]["mode"]["enum"]


def test_over_mcp_a_forbidden_switch_is_an_error_result_and_an_allowed_one_moves_the_session(server):
    session_id = new_session(server, server.token, mode="review")

    async def calls(session):
        return [
            await session.call_tool("agent_change_mode", change("deploy")),
            await session.call_tool("agent_change_mode", change("review_notes")),
        ]

    _, (refused, moved) = asyncio.run(in_session(f"{server.base}/mcp/sessions/{session_id}/", server.token, calls))
    assert (refused.is_error, [content.text for content in refused.content]) == (
        True,
        ["Mode 'review' cannot switch to 'deploy'. Modes it can switch to: general, review_notes."],
    )
    assert moved.is_error is False
    assert [(row["fromMode"], row["toMode"]) for row in mode_changes(server, server.token, session_id)] == [
        ("review", "review_notes")
    ]
    assert run_django_json(server.env, REFUSALS.format(session=session_id)) == [["review", "deploy"]]


# The refusals of one session, by mode key (recorded for GET /api/catalog/transitions/).
REFUSALS = """
import json
from modes.models import AgentMode
from sessions_app.models import ModeChangeRefusal
keys = dict(AgentMode.objects.values_list("id", "key"))
rows = ModeChangeRefusal.objects.filter(session_id="{session}")
print(json.dumps([[keys[row.from_mode_id], keys[row.to_mode_id]] for row in rows]))
"""


def test_over_mcp_the_mode_enum_lists_the_allowed_targets_and_follows_the_session(server):
    session_id = new_session(server, server.token, mode="review")

    async def list_change_list(session):
        before = await session.list_tools()
        await session.call_tool("agent_change_mode", change("general"))
        return before, await session.list_tools()

    _, (before, after) = asyncio.run(
        in_session(f"{server.base}/mcp/sessions/{session_id}/", server.token, list_change_list)
    )
    assert enum_of(before) == ["general", "review", "review_notes"]
    assert enum_of(after) == ["general", "ddr_authoring", "workflow_authoring", "review", "review_notes"]


def test_a_session_can_be_created_in_a_mode_the_model_may_not_enter(server):
    session_id = new_session(server, server.token, mode="deploy")
    response = requests.get(
        f"{server.base}/api/sessions/{session_id}/", headers={"Authorization": f"Token {server.token}"}, timeout=30
    )
    assert response.json()["mode"] == "deploy"
