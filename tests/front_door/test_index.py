"""GET /: a page for a person, with links to the admin, the API docs, health and MCP; JSON for a program."""

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

ENTRY_POINTS = {
    name: {"methods": methods, "href": href, "description": description}
    for name, methods, href, description in [
        ("token", ["POST"], "/api/token/", "Trade a username and password for an API token."),
        ("modes", ["GET"], "/api/modes/", "The mode catalog; ?filter= and ?includeExamples=true."),
        ("mode", ["GET"], "/api/modes/{key}/", "One mode, by key."),
        ("systemPrompt", ["GET"], "/api/system-prompt/", "The Mode Catalog system-prompt block."),
        ("tools", ["GET"], "/api/tools/", "Every tool's schema; ?toolFormat= picks a vendor's."),
        ("invokeTool", ["POST"], "/api/tools/{name}/invoke/", "Run a tool, in a session if one is named."),
        ("sessions", ["GET", "POST"], "/api/sessions/", "Your agent sessions; create one."),
        (
            "sessionContext",
            ["GET"],
            "/api/sessions/{sessionId}/context/",
            "The system prompt and tools for a session's next LLM call; ?revision= rebuilds an earlier one.",
        ),
        (
            "catalogRevisions",
            ["GET"],
            "/api/catalog/revisions/",
            "Every revision of the catalog, newest first (staff only).",
        ),
        ("catalogRevision", ["GET"], "/api/catalog/revisions/{number}/", "One revision's whole catalog (staff only)."),
        ("mcp", ["POST"], "/mcp/", "MCP (streamable HTTP): the catalog and the tools that need no session."),
        ("mcpSession", ["POST"], "/mcp/sessions/{sessionId}/", "MCP for one of your sessions: its mode's tools."),
        ("schema", ["GET"], "/api/schema/", "The OpenAPI schema (YAML; ?format=json for JSON)."),
        ("docs", ["GET"], "/api/docs/", "The API documentation (Swagger UI)."),
        ("admin", ["GET"], "/admin/", "The admin: review and edit modes, declared tools, accounts."),
        ("healthz", ["GET"], "/healthz", "Liveness: the process is up."),
        ("readyz", ["GET"], "/readyz", "Readiness: database, mode catalog and cache."),
    ]
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


# Where each link of the page takes a visitor who has not logged in: its status, redirect, and a part of the
# page that says it is the one named.
LINKED_PAGES = {
    "/admin/": (302, "/admin/login/?next=/admin/", b""),  # the admin's login page first
    "/api/docs/": (200, None, b"<title>Aptix Modes API</title>"),
    "/healthz": (200, None, b'{"status": "ok"}'),
    "/readyz": (200, None, b'{"status": "ok", "checks": {"database": "ok", "catalog": "ok", '),
}


def test_each_link_leads_to_the_page_it_names():
    html = Client().get("/").content.decode()
    hrefs = set(re.findall(r'<a href="(/[^"]*)"', html))
    assert hrefs == set(LINKED_PAGES)
    for href in sorted(hrefs):
        response = Client().get(href)
        status, location, part = LINKED_PAGES[href]
        assert (response.status_code, response.get("Location"), part in response.content) == (status, location, True)


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


# What an anonymous GET of each entry point without a placeholder gets: none is a 404.
ANONYMOUS_GETS = {
    "token": (405, "application/json"),  # POST only
    "modes": (401, "application/json"),
    "systemPrompt": (401, "application/json"),
    "tools": (401, "application/json"),
    "sessions": (401, "application/json"),
    "catalogRevisions": (401, "application/json"),
    "mcp": (401, "application/json"),
    "schema": (200, "application/vnd.oai.openapi; charset=utf-8"),
    "docs": (200, "text/html; charset=utf-8"),
    "admin": (302, "text/html; charset=utf-8"),  # to its login page
    "healthz": (200, "application/json"),
    "readyz": (200, "application/json"),
}
NOT_AUTHENTICATED = "Authentication credentials were not provided."
# The refusals say what the entry point needs: another method, or a token.
REFUSALS = {
    "token": {"detail": 'Method "GET" not allowed.'},
    **{
        name: {"detail": NOT_AUTHENTICATED}
        for name in ("modes", "systemPrompt", "tools", "sessions", "catalogRevisions")
    },
    "mcp": {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": NOT_AUTHENTICATED}},
}


def test_each_entry_point_without_a_placeholder_answers_an_anonymous_get():
    client = Client()
    answers = {name: client.get(entry["href"]) for name, entry in ENTRY_POINTS.items() if "{" not in entry["href"]}
    statuses = {name: (response.status_code, response["Content-Type"]) for name, response in answers.items()}
    assert statuses == ANONYMOUS_GETS
    assert {name: answers[name].json() for name in REFUSALS} == REFUSALS


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
