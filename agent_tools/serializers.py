"""Request shapes shared by every endpoint that hands out tool schemas: the ?tool_format= query."""

from rest_framework import serializers

from aptix_site.api import PresentIfEmpty, RequestSerializer

from .formats import TOOL_FORMATS

_VALID = ", ".join(TOOL_FORMATS)


class ToolFormatField(PresentIfEmpty, serializers.ChoiceField):
    pass


class ToolFormatQuery(RequestSerializer):
    tool_format = ToolFormatField(
        choices=TOOL_FORMATS,
        required=False,
        default=None,
        error_messages={"invalid_choice": f'"{{input}}" is not a tool format; use one of: {_VALID}.'},
        help_text="The shape of each tool: left out, the TUL-011 registry schema; openai-chat (Chat Completions), "
        "openai-responses (the Responses API, strict mode), anthropic (the Messages API) or mcp (an MCP tool).",
    )
