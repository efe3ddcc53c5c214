"""
The audit row of a mode change names the organization its caller belongs to at the moment of the change, not the
one the session was created in: a user who moved to another organization changes her old session's mode on the
new organization's account. Checked on every way in (REST invoke, MCP tools/call, manage.py invoke_tool), for a
switch and a branch.

The caller's organization is read with the session's lock, in the one ORM transaction that changes the mode, the
same on PostgreSQL and SQLite; a branch adds its session to that transaction, so both are checked.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from modes.catalog import published_release
from sessions_app.models import AgentSession, ModeChange
from sessions_app.services import create_session

from .test_services import SWITCH_AND_BRANCH
from ..expected import DDR_ID


def change_over_rest(user, session, arguments):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.api_key}")
    response = client.post(
        "/api/tools/agent_change_mode/invoke/", {"arguments": arguments, "sessionId": str(session.pk)}, format="json"
    )
    assert response.status_code == 200, response.content
    return json.loads(response.json()["result"])


def change_over_mcp(user, session, arguments):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {user.api_key}")
    call = {"name": "agent_change_mode", "arguments": arguments}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    # As a client sends it after a 2025-11-25 handshake (2025-03-26, without the header, has no structuredContent).
    response = client.post(f"/mcp/sessions/{session.pk}/", body, format="json", HTTP_MCP_PROTOCOL_VERSION="2025-11-25")
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    assert result["isError"] is False, result
    return result["structuredContent"]


def change_from_the_command_line(user, session, arguments):
    out = StringIO()
    call_command(
        "invoke_tool", "agent_change_mode", arguments=json.dumps(arguments), session=str(session.pk),
        user=user.username, stdout=out,
    )
    return json.loads(json.loads(out.getvalue())["result"])


@pytest.fixture
def alice_moved_to_globex(alice, bob):
    """Alice's session, made while she was in acme; she has since moved to globex (bob's organization)."""
    session = create_session(release=published_release(), owner=alice, org=alice.membership.organization)
    alice.membership.organization = bob.membership.organization
    alice.membership.save()
    return session


@pytest.mark.django_db
@SWITCH_AND_BRANCH
@pytest.mark.parametrize(
    "change", [change_over_rest, change_over_mcp, change_from_the_command_line], ids=["rest", "mcp", "command"]
)
def test_the_audit_row_names_the_callers_organization_now_not_the_sessions(alice, alice_moved_to_globex, change, branch):
    session = alice_moved_to_globex
    arguments = {"mode": "ddr_authoring", "branch": branch, "reason": "Writing a spec."}

    result = change(alice, session, arguments)

    assert {key: result[key] for key in ("success", "mode", "branch")} == {
        "success": True,
        "mode": "ddr_authoring",
        "branch": branch,
    }
    [audit] = ModeChange.objects.filter(session=session).values("org__slug", "changed_by__username", "to_mode_id")
    assert audit == {"org__slug": "globex", "changed_by__username": "alice", "to_mode_id": DDR_ID}
    # The session keeps the organization it was made in; a branch is made in its parent's.
    assert list(AgentSession.objects.filter(owner=alice).values_list("org__slug", flat=True)) == ["acme"] * (1 + branch)
