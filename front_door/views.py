"""GET /: a page for a person who opens the service's address, or the JSON index of its entry points for a program; and
the page of a form that CSRF protection refused (CSRF_FAILURE_VIEW)."""

from urllib.parse import unquote

from django.http import JsonResponse
from django.middleware.csrf import REASON_NO_CSRF_COOKIE, REASON_NO_REFERER
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.vary import vary_on_headers

from aptix_site.middleware import serves_methods


def _entry(url_name: str, description: str, *, placeholders=(), methods=("GET",), slash="") -> dict:
    """An entry point; each placeholder is a part of its path the caller fills in, shown as {name} (RFC 6570)."""
    # unquote: reverse() quotes the braces.
    href = unquote(reverse(url_name, args=[f"{{{placeholder}}}" for placeholder in placeholders])) + slash
    return {"methods": list(methods), "href": href, "description": description}


def api_entry_points() -> dict[str, dict]:
    """What an agent back-end or an MCP client calls, in the order a newcomer would meet them."""
    return {
        "token": _entry("api-token", "Trade a username and password for an API token.", methods=["POST"]),
        "modes": _entry("mode-list", "The mode catalog; ?filter= and ?includeExamples=true."),
        "mode": _entry("mode-detail", "One mode, by key.", placeholders=["key"]),
        "systemPrompt": _entry("system-prompt", "The Mode Catalog system-prompt block."),
        "tools": _entry("tool-list", "Every tool's schema; ?toolFormat= picks a vendor's."),
        "invokeTool": _entry(
            "tool-invoke", "Run a tool, in a session if one is named.", placeholders=["name"], methods=["POST"]
        ),
        "sessions": _entry("session-list", "Your agent sessions; create one.", methods=["GET", "POST"]),
        "sessionContext": _entry(
            "session-context",
            "The system prompt and tools for a session's next LLM call; ?revision= rebuilds an earlier one.",
            placeholders=["sessionId"],
        ),
        "catalogRevisions": _entry(
            "catalog-revision-list", "Every revision of the catalog, newest first (staff only)."
        ),
        "catalogRevision": _entry(
            "catalog-revision-detail", "One revision's whole catalog (staff only).", placeholders=["number"]
        ),
        # The MCP routes take the trailing slash as optional (clients follow no redirects); shown, as docs/mcp.md does.
        "mcp": _entry(
            "mcp", "MCP (streamable HTTP): the catalog and the tools that need no session.", methods=["POST"], slash="/"
        ),
        "mcpSession": _entry(
            "mcp-session", "MCP for one of your sessions: its mode's tools.", placeholders=["sessionId"],
            methods=["POST"], slash="/",
        ),
        "schema": _entry("api-schema", "The OpenAPI schema (YAML; ?format=json for JSON)."),
        "docs": _entry("api-docs", "The API documentation (Swagger UI)."),
    }


def operator_entry_points() -> dict[str, dict]:
    """What people and monitors open."""
    return {
        "admin": _entry("admin:index", "The admin: review and edit modes, declared tools, accounts."),
        "healthz": _entry("healthz", "Liveness: the process is up."),
        "readyz": _entry("readyz", "Readiness: database, mode catalog and cache."),
    }


@serves_methods("GET", "HEAD")
@vary_on_headers("Accept")
def front_door(request):
    if request.get_preferred_type(["text/html", "application/json"]) == "application/json":
        description = "The agent's modes, and the mode tools, over REST and MCP."
        entry_points = {**api_entry_points(), **operator_entry_points()}
        return JsonResponse({"service": "Aptix Modes", "description": description, "entryPoints": entry_points})
    context = {"api_entry_points": api_entry_points(), "operator_entry_points": operator_entry_points()}
    # As a shell command: $SESSION is the variable the README's walk-through sets.
    context["mcp_session_url"] = request.build_absolute_uri(reverse("mcp-session", args=["$SESSION"]) + "/")
    return render(request, "front_door/index.html", context)


def csrf_failure(request, reason=""):
    """
    Django's CSRF failure view, with a page (403_csrf.html) that the pages' Content-Security-Policy lets render, where
    Django's own has an inline style; Django renders a template of that name without its reason.
    """
    context = {"reason": reason, "no_cookie": reason == REASON_NO_CSRF_COOKIE, "no_referer": reason == REASON_NO_REFERER}
    return render(request, "403_csrf.html", context, status=403)
