"""GET /: a page for a person who opens the service's address, or the JSON index of its entry points for a program."""

from urllib.parse import unquote

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.vary import vary_on_headers

from aptix_site.middleware import serves_methods


def _path(url_name: str, *placeholders: str) -> str:
    """The URL's path; {name} marks a part the caller fills in (RFC 6570), whose braces reverse() would quote."""
    return unquote(reverse(url_name, args=[f"{{{placeholder}}}" for placeholder in placeholders]))


def _entry(methods: list[str], href: str, description: str) -> dict:
    return {"methods": methods, "href": href, "description": description}


def api_entry_points() -> dict[str, dict]:
    """What an agent back-end or an MCP client calls, in the order a newcomer would meet them."""
    return {
        "token": _entry(["POST"], _path("api-token"), "Trade a username and password for an API token."),
        "modes": _entry(["GET"], _path("mode-list"), "The mode catalog; ?filter= and ?includeExamples=true."),
        "mode": _entry(["GET"], _path("mode-detail", "key"), "One mode, by key."),
        "systemPrompt": _entry(["GET"], _path("system-prompt"), "The Mode Catalog system-prompt block."),
        "tools": _entry(["GET"], _path("tool-list"), "Every tool's schema; ?toolFormat= picks a vendor's."),
        "invokeTool": _entry(["POST"], _path("tool-invoke", "name"), "Run a tool, in a session if one is named."),
        "sessions": _entry(["GET", "POST"], _path("session-list"), "Your agent sessions; create one."),
        "sessionContext": _entry(
            ["GET"], _path("session-context", "sessionId"),
            "The system prompt and tools for a session's next LLM call; ?revision= rebuilds an earlier one.",
        ),
        "catalogRevisions": _entry(
            ["GET"], _path("catalog-revision-list"), "Every revision of the catalog, newest first (staff only)."
        ),
        "catalogRevision": _entry(
            ["GET"], _path("catalog-revision-detail", "number"), "One revision's whole catalog (staff only)."
        ),
        # The MCP routes take the trailing slash as optional (clients follow no redirects); shown, as docs/mcp.md does.
        "mcp": _entry(
            ["POST"], _path("mcp") + "/", "MCP (streamable HTTP): the catalog and the tools that need no session."
        ),
        "mcpSession": _entry(
            ["POST"], _path("mcp-session", "sessionId") + "/", "MCP for one of your sessions: its mode's tools."
        ),
        "schema": _entry(["GET"], _path("api-schema"), "The OpenAPI schema (YAML; ?format=json for JSON)."),
        "docs": _entry(["GET"], _path("api-docs"), "The API documentation (Swagger UI)."),
    }


def operator_entry_points() -> dict[str, dict]:
    """What people and monitors open."""
    return {
        "admin": _entry(["GET"], _path("admin:index"), "The admin: review and edit modes, declared tools, accounts."),
        "healthz": _entry(["GET"], _path("healthz"), "Liveness: the process is up."),
        "readyz": _entry(["GET"], _path("readyz"), "Readiness: database, mode catalog and cache."),
    }


@serves_methods("GET", "HEAD")
@vary_on_headers("Accept")
def front_door(request):
    if request.get_preferred_type(["text/html", "application/json"]) == "application/json":
        return JsonResponse(
            {
                "service": "Aptix Modes",
                "description": "The agent's modes, and the mode tools, over REST and MCP.",
                "entryPoints": {**api_entry_points(), **operator_entry_points()},
            }
        )
    context = {"api_entry_points": api_entry_points(), "operator_entry_points": operator_entry_points()}
    # As a shell command: $SESSION is the variable the README's walk-through sets.
    context["mcp_session_url"] = request.build_absolute_uri(reverse("mcp-session", args=["$SESSION"]) + "/")
    return render(request, "front_door/index.html", context)
