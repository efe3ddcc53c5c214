"""Request and response shapes (aptix_site.shapes) of the agent API: a tool call, the tool list, a session's context."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from agent_tools.formats import TOOL_FORMATS
from aptix_site.api import RequestSerializer, RevisionNumberField, StrictCharField, StrictSerializer
from aptix_site.shapes import Shape
from sessions_app.confirmations import CHOICES


TOOL_FORMAT_HELP = (
    "The shape of each tool: left out, the TUL-011 registry schema; openai-chat (Chat Completions), "
    "openai-responses (the Responses API, strict mode), anthropic (the Messages API) or mcp (an MCP tool)."
)


class ToolFormatField(serializers.ChoiceField):
    default_error_messages = {
        "invalid_choice": f'"{{input}}" is not a tool format; use one of: {", ".join(TOOL_FORMATS)}.'
    }

    def __init__(self, help_text=TOOL_FORMAT_HELP):
        super().__init__(choices=TOOL_FORMATS, required=False, default=None, help_text=help_text)


@extend_schema_serializer(deprecate_fields=["tool_format"])
class ToolFormatQuery(RequestSerializer):
    toolFormat = ToolFormatField(
        f"{TOOL_FORMAT_HELP} Its old name, tool_format, is still accepted; if both are sent, they must agree."
    )
    # Its name before query parameters were camelCase, still accepted: clients written against it keep working.
    tool_format = ToolFormatField()

    def validate(self, data):
        new, old = data["toolFormat"], data.pop("tool_format")
        if None not in (new, old) and new != old:
            raise serializers.ValidationError(
                {"toolFormat": [f'toolFormat "{new}" and tool_format "{old}" differ; send toolFormat alone.']}
            )
        return {**data, "toolFormat": new or old}


# Documentation only: the schema says what invoke_tool accepts, an object or a string holding one for the
# arguments and a UUID for the session id; the fields behave exactly as their bases.
@extend_schema_field({"oneOf": [{"type": "object", "additionalProperties": {}}, {"type": "string"}]})
class ArgumentsField(serializers.JSONField):
    pass


@extend_schema_field(OpenApiTypes.UUID)
class SessionIdField(StrictCharField):
    pass


class Invocation(StrictSerializer):
    """A tool call: its arguments, and the session and conversation it belongs to; other fields are refused."""

    arguments = ArgumentsField(
        required=False, allow_null=True, default=None,
        help_text="The tool's arguments: a JSON object, or a string holding one.",
    )
    sessionId = SessionIdField(
        required=False, allow_null=True, default=None, max_length=64, help_text="Id of one of your sessions."
    )
    conversationId = StrictCharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False, default=None, max_length=200,
        help_text="Passed to the tool as it is.",
    )


class ConfirmationResponse(Shape):
    id = serializers.UUIDField(
        help_text="The id to answer it with, at POST /api/sessions/{session_id}/confirmations/{id}/."
    )
    question = serializers.CharField(help_text="TUL-007 §4.1's question, for the person (not the model) to answer.")
    choices = serializers.ListField(child=serializers.ChoiceField(choices=CHOICES))
    expires_at = serializers.DateTimeField(help_text="Ten minutes after it was asked; answered later, a 410.")


# A tool's InvokeResult (TUL-011), as every answer of POST /api/tools/<name>/invoke/ and invoke_tool give it.
class InvocationResponse(Shape):
    successful = serializers.BooleanField()
    result = serializers.CharField(allow_null=True, help_text="The tool's JSON result, as a string.")
    error_message = serializers.CharField(allow_null=True)
    confirmation = ConfirmationResponse(
        required=False,
        help_text="Only while agent_change_mode waits for the user to confirm (MODE_CHANGE_CONFIRMATION): the "
        "question to show them.",
    )

    def to_representation(self, instance):
        envelope = super().to_representation(instance)
        if envelope["confirmation"] is None:
            del envelope["confirmation"]  # the envelope of TUL-011 otherwise
        return envelope


class ConfirmationAnswer(StrictSerializer):
    choice = serializers.ChoiceField(choices=CHOICES, help_text="The person's answer: stay, switch or branch.")


class ToolSchemaListResponse(Shape):
    tools = serializers.ListField(
        child=serializers.DictField(),
        help_text="Every tool, registered or declared, sorted by name, in the shape ?tool_format= asks for.",
    )
    client_tools = serializers.ListField(
        child=serializers.CharField(),
        help_text="Names of the tools the agent's client executes itself; invoking one here answers 409.",
    )


class SessionContextQuery(ToolFormatQuery):
    revision = RevisionNumberField(
        required=False, default=None,
        help_text="Rebuild the context exactly as it was at this catalog revision, for the mode the session was "
        "in then; left out, the context now.",
    )


class SessionContextResponse(Shape):
    catalog_revision = serializers.IntegerField(help_text="The catalog revision this context was built from.")
    system_prompt = serializers.CharField(help_text="The Mode Catalog block for the session's current mode.")
    mode_instructions = serializers.CharField(
        allow_blank=True,
        help_text="What the current mode tells the model, to send beside the Mode Catalog block (AGN-014 §6.1): its "
        "prompt, its instruction lines and its custom instructions, in that order, a blank line between them; empty "
        "when the mode has none.",
    )
    tools = serializers.ListField(
        child=serializers.DictField(),
        help_text="The tools the mode enables, always agent_change_mode (whose 'mode' lists the catalog's keys), "
        "in the shape ?tool_format= asks for.",
    )
    client_tools = serializers.ListField(
        child=serializers.CharField(), help_text="Names of the tools above that the agent's client executes itself."
    )
    unresolved_tool_ids = serializers.ListField(
        child=serializers.CharField(),
        help_text="Tool ids the mode lists that name no registered or declared tool; the model is not told of them.",
    )
    notice = serializers.CharField(
        required=False,
        help_text="Only when the session's mode is not in the published catalog: says that the default mode applies.",
    )
