"""/mcp/ and /mcp/sessions/<id>/, with or without the trailing slash: an MCP client does not follow redirects."""

from django.urls import re_path

from . import views

urlpatterns = [
    re_path(r"^mcp/?$", views.McpView.as_view(), name="mcp"),
    re_path(r"^mcp/sessions/(?P<session_id>[^/]+)/?$", views.McpView.as_view(), name="mcp-session"),
]
