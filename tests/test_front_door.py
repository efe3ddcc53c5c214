"""GET /: a page for a person, with links to the admin, the API docs, health and MCP; JSON for a program."""

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ENTRY_POINTS = {
    "token": {"methods": ["POST"], "href": "/api/token/", "description": "Trade a username and password for an API token."},
    "modes": {
        "methods": ["GET"],
        "href": "/api/modes/",
        "description": "The mode catalog; ?filter= and ?includeExamples=true.",
    },
    "mode": {"methods": ["GET"], "href": "/api/modes/{key}/", "description": "One mode, by key."},
    "systemPrompt": {
        "methods": ["GET"],
        "href": "/api/system-prompt/",
        "description": "The Mode Catalog system-prompt block.",
    },
    "tools": {
        "methods": ["GET"],
        "href": "/api/tools/",
        "description": "Every tool's schema; ?tool_format= picks a vendor's.",
    },
    "invokeTool": {
        "methods": ["POST"],
        "href": "/api/tools/{name}/invoke/",
        "description": "Run a tool, in a session if one is named.",
    },
    "sessions": {"methods": ["GET", "POST"], "href": "/api/sessions/", "description": "Your agent sessions; create one."},
    "sessionContext": {
        "methods": ["GET"],
        "href": "/api/sessions/{sessionId}/context/",
        "description": "The system prompt and tools for a session's next LLM call; ?revision= rebuilds an earlier one.",
    },
    "catalogRevisions": {
        "methods": ["GET"],
        "href": "/api/catalog/revisions/",
        "description": "Every revision of the catalog, newest first.",
    },
    "catalogRevision": {
        "methods": ["GET"],
        "href": "/api/catalog/revisions/{number}/",
        "description": "One revision's whole catalog.",
    },
    "mcp": {
        "methods": ["POST"],
        "href": "/mcp/",
        "description": "MCP (streamable HTTP): the catalog and the tools that need no session.",
    },
    "mcpSession": {
        "methods": ["POST"],
        "href": "/mcp/sessions/{sessionId}/",
        "description": "MCP for one of your sessions: its mode's tools.",
    },
    "schema": {"methods": ["GET"], "href": "/api/schema/", "description": "The OpenAPI schema (YAML; ?format=json for JSON)."},
    "docs": {"methods": ["GET"], "href": "/api/docs/", "description": "The API documentation (Swagger UI)."},
    "admin": {
        "methods": ["GET"],
        "href": "/admin/",
        "description": "The admin: review and edit modes, declared tools, accounts.",
    },
    "healthz": {"methods": ["GET"], "href": "/healthz", "description": "Liveness: the process is up."},
    "readyz": {"methods": ["GET"], "href": "/readyz", "description": "Readiness: database, mode catalog and cache."},
}


def test_a_browser_gets_a_page_that_links_to_the_admin_docs_health_and_mcp():
    response = Client().get("/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    html = response.content.decode()
    assert "<title>Aptix Modes</title>" in html
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', html)
    assert ("/admin/", "Admin") in links
    assert ("/api/docs/", "API documentation") in links
    assert ("/readyz", "Health") in links
    assert ("#mcp", "Connect an MCP client") in links
    assert 'claude mcp add --transport http aptix-modes "http://testserver/mcp/sessions/$SESSION/"' in html


def test_each_linked_page_exists():
    html = Client().get("/").content.decode()
    for href in re.findall(r'<a href="(/[^"]*)"', html):
        assert Client().get(href).status_code in {200, 302}, href  # the admin redirects to its login


def test_the_page_shows_the_token_header_with_its_placeholder():
    assert "<code>Authorization: Token &lt;key&gt;</code>" in Client().get("/").content.decode()


def test_a_program_asking_for_json_gets_the_index_of_entry_points():
    response = Client().get("/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "service": "Aptix Modes",
        "description": "The agent's modes, and the mode tools, over REST and MCP.",
        "entryPoints": ENTRY_POINTS,
    }


def test_each_entry_point_without_a_placeholder_answers():
    client = Client()
    for name, entry in ENTRY_POINTS.items():
        if "{" not in entry["href"]:
            assert client.get(entry["href"]).status_code != 404, name


@pytest.mark.parametrize("accept", ["", "*/*", "text/plain", "text/html;q=0.9, application/json;q=0.5"])
def test_any_other_accept_gets_the_page(accept):
    response = Client().get("/", HTTP_ACCEPT=accept)
    assert (response.status_code, response["Content-Type"]) == (200, "text/html; charset=utf-8")


def test_the_answer_varies_with_accept_for_caches():
    assert "Accept" in Client().get("/")["Vary"]


def test_post_is_not_allowed():
    assert Client().post("/").status_code == 405


def test_the_admins_view_site_link_leads_to_the_front_door(admin_client):
    html = admin_client.get("/admin/").content.decode()
    assert '<a href="/">View site</a>' in html
