"""The service's entry points, as the front door lists them to people (HTML) and to programs (JSON)."""

from dataclasses import dataclass
from urllib.parse import unquote

from django.urls import reverse


@dataclass(frozen=True)
class EntryPoint:
    name: str
    methods: tuple[str, ...]
    href: str  # a path; {name} marks a part the caller fills in (RFC 6570)
    description: str


def _path(url_name: str, *placeholders: str) -> str:
    # reverse() quotes the braces of a placeholder; a URI template keeps them.
    return unquote(reverse(url_name, args=[f"{{{placeholder}}}" for placeholder in placeholders]))


def _mcp_path(url_name: str, *placeholders: str) -> str:
    # The MCP routes take the trailing slash as optional (clients do not follow redirects); show it, as docs/mcp.md does.
    return _path(url_name, *placeholders).rstrip("/") + "/"


def api_entry_points() -> list[EntryPoint]:
    """What an agent back-end or an MCP client calls, in the order a newcomer would meet them."""
    return [
        EntryPoint("token", ("POST",), _path("api-token"), "Trade a username and password for an API token."),
        EntryPoint("modes", ("GET",), _path("mode-list"), "The mode catalog; ?filter= and ?includeExamples=true."),
        EntryPoint("mode", ("GET",), _path("mode-detail", "key"), "One mode, by key."),
        EntryPoint("systemPrompt", ("GET",), _path("system-prompt"), "The Mode Catalog system-prompt block."),
        EntryPoint("tools", ("GET",), _path("tool-list"), "Every tool's schema; ?toolFormat= picks a vendor's."),
        EntryPoint("invokeTool", ("POST",), _path("tool-invoke", "name"), "Run a tool, in a session if one is named."),
        EntryPoint("sessions", ("GET", "POST"), _path("session-list"), "Your agent sessions; create one."),
        EntryPoint(
            "sessionContext", ("GET",), _path("session-context", "sessionId"),
            "The system prompt and tools for a session's next LLM call; ?revision= rebuilds an earlier one.",
        ),
        EntryPoint(
            "catalogRevisions", ("GET",), _path("catalog-revision-list"),
            "Every revision of the catalog, newest first (staff only).",
        ),
        EntryPoint(
            "catalogRevision", ("GET",), _path("catalog-revision-detail", "number"),
            "One revision's whole catalog (staff only).",
        ),
        EntryPoint(
            "mcp", ("POST",), _mcp_path("mcp"), "MCP (streamable HTTP): the catalog and the tools that need no session."
        ),
        EntryPoint(
            "mcpSession", ("POST",), _mcp_path("mcp-session", "sessionId"),
            "MCP for one of your sessions: its mode's tools.",
        ),
        EntryPoint("schema", ("GET",), _path("api-schema"), "The OpenAPI schema (YAML; ?format=json for JSON)."),
        EntryPoint("docs", ("GET",), _path("api-docs"), "The API documentation (Swagger UI)."),
    ]


def operator_entry_points() -> list[EntryPoint]:
    """What people and monitors open."""
    return [
        EntryPoint(
            "admin", ("GET",), _path("admin:index"), "The admin: review and edit modes, declared tools, accounts."
        ),
        EntryPoint("healthz", ("GET",), _path("healthz"), "Liveness: the process is up."),
        EntryPoint("readyz", ("GET",), _path("readyz"), "Readiness: database, mode catalog and cache."),
    ]


def index_payload() -> dict:
    """GET / as JSON."""
    return {
        "service": "Aptix Modes",
        "description": "The agent's modes, and the mode tools, over REST and MCP.",
        "entryPoints": {
            entry.name: {"methods": list(entry.methods), "href": entry.href, "description": entry.description}
            for entry in [*api_entry_points(), *operator_entry_points()]
        },
    }
