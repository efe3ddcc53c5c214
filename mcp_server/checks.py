"""System checks of the MCP server's settings."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error


def check_allowed_origins(app_configs, **kwargs):
    """Each MCP_ALLOWED_ORIGINS entry is an origin as a browser sends it, or it would never match one."""
    return [
        Error(
            f"MCP_ALLOWED_ORIGINS has {entry!r}, which is not an origin, so no request would match it.",
            hint="Write each as scheme://host[:port] with nothing after it, e.g. http://localhost:6274.",
            obj="MCP_ALLOWED_ORIGINS",
            id="mcp_server.E001",
        )
        for entry in settings.MCP_ALLOWED_ORIGINS
        if not is_origin(entry)
    ]


def is_origin(entry: str) -> bool:
    try:
        parts = urlsplit(entry)
    except ValueError:  # "http://[::1": an unclosed bracket
        return False
    return bool(parts.scheme and parts.netloc) and not (parts.path or parts.query or parts.fragment)
