"""The MCP server app: its endpoints are plain views; its settings are checked at start."""

from django.apps import AppConfig
from django.core import checks


class McpServerConfig(AppConfig):
    name = "mcp_server"

    def ready(self):
        from .checks import check_allowed_origins

        checks.register(check_allowed_origins)
