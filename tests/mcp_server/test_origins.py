"""Which Origin headers the MCP endpoints accept: the request's own, CSRF_TRUSTED_ORIGINS, MCP_ALLOWED_ORIGINS."""

import json

import pytest

from sessions_app.models import ModeChange

pytestmark = pytest.mark.django_db

LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


@pytest.fixture
def alice_mcp(alice):
    """An MCP client's requests: alice's token as a bearer token."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {alice.api_key}")
    return client


def post_mcp(client, path, origin, body=LIST_TOOLS):
    headers = {} if origin is None else {"HTTP_ORIGIN": origin}
    return client.post(path, body, content_type="application/json", **headers)


@pytest.mark.parametrize("origin", [None, "http://testserver"])
def test_programs_and_the_services_own_pages_are_served(alice_mcp, origin):
    assert post_mcp(alice_mcp, "/mcp/", origin).status_code == 200


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "https://testserver", "http://testserver:8080", "null", "http://testserver.evil", "http://[::1"],
)
def test_any_other_origin_is_refused_before_the_token_is_looked_at(alice_mcp, anon_client, origin):
    for client in (alice_mcp, anon_client):
        response = post_mcp(client, "/mcp/", origin)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == -32600


def test_a_refused_mode_change_changes_nothing(alice_mcp, alice_session):
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "agent_change_mode", "arguments": {"mode": "ddr_authoring", "branch": False, "reason": "x"}},
    })
    response = post_mcp(alice_mcp, f"/mcp/sessions/{alice_session.pk}/", "http://evil.example", body)
    assert response.status_code == 403
    assert not ModeChange.objects.exists()
    alice_session.refresh_from_db()
    assert alice_session.mode.key == "general"


def test_trusted_and_allowed_origins_are_served(alice_mcp, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://admin.example", "https://*.agents.example"]
    settings.MCP_ALLOWED_ORIGINS = ["http://localhost:6274"]
    for origin in ("https://admin.example", "https://chat.agents.example", "http://localhost:6274"):
        assert post_mcp(alice_mcp, "/mcp/", origin).status_code == 200, origin
    for origin in ("http://admin.example", "https://agents.example.evil", "http://chat.agents.example"):
        assert post_mcp(alice_mcp, "/mcp/", origin).status_code == 403, origin


@pytest.mark.parametrize(
    "entry", ["localhost:6274", "https://chat.example/", "chat.example", "https://x.example/mcp", "http://[::1"]
)
def test_an_allowed_origin_that_is_not_an_origin_is_a_system_check_error(settings, entry):
    from mcp_server.checks import check_allowed_origins

    settings.MCP_ALLOWED_ORIGINS = ["http://localhost:6274", entry]
    assert [(error.id, error.msg) for error in check_allowed_origins(None)] == [
        ("mcp_server.E001", f"MCP_ALLOWED_ORIGINS has {entry!r}, which is not an origin, so no request would match it.")
    ]


def test_origins_written_as_origins_pass_the_check(settings):
    from mcp_server.checks import check_allowed_origins

    settings.MCP_ALLOWED_ORIGINS = ["http://localhost:6274", "https://chat.example.com"]
    assert check_allowed_origins(None) == []
