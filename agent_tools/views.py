"""REST endpoints for the agent tools: their schemas, and invoking one."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.api import SettingsRateThrottle, StrictCharField, StrictSerializer, error_responses

from .registry import registry
from .services import invoke_tool


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
        required=False,
        allow_null=True,
        default=None,
        help_text="The tool's arguments: a JSON object, or a string holding one.",
    )
    sessionId = SessionIdField(
        required=False, allow_null=True, default=None, max_length=64, help_text="Id of one of your sessions."
    )
    conversationId = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=False,
        default=None,
        max_length=200,
        help_text="Passed to the tool as it is.",
    )


class InvocationResponse(serializers.Serializer):
    successful = serializers.BooleanField()
    result = serializers.CharField(allow_null=True, help_text="The tool's JSON result, as a string.")
    errorMessage = serializers.CharField(allow_null=True)


class ToolSchemaListResponse(serializers.Serializer):
    tools = serializers.ListField(
        child=serializers.DictField(), help_text="OpenAI function-tool schemas, sorted by name."
    )


class ToolListView(APIView):
    @extend_schema(operation_id="listTools", responses={200: ToolSchemaListResponse, **error_responses(400, 401)})
    def get(self, request):
        return Response({"tools": [tool.get_schema() for tool in registry.tools()]})


class ToolInvokeView(APIView):
    throttle_classes = [SettingsRateThrottle]
    throttle_scope = "tool-invoke"

    @extend_schema(
        operation_id="invokeTool",
        request=Invocation,
        responses={200: InvocationResponse, **error_responses(400, 401, 403, 404, 411, 413, 415, 429, 500)},
        description="Runs a tool and answers with its envelope (successful, result, errorMessage). "
        "When the tool rejects its arguments (400) or fails unexpectedly (500) the body is that envelope; "
        "when the API refuses the request itself (a malformed body, an unknown field, a bad sessionId) "
        "the body names the fields or carries a 'detail'.",
    )
    def post(self, request, name):
        invocation = Invocation(data=request.data)
        invocation.is_valid(raise_exception=True)
        result = invoke_tool(
            name=name,
            arguments=invocation.validated_data["arguments"],
            session_id=invocation.validated_data["sessionId"],
            conversation_id=invocation.validated_data["conversationId"],
            user=request.user,
        )
        if result.successful:
            code = status.HTTP_200_OK
        elif result.server_fault:
            code = status.HTTP_500_INTERNAL_SERVER_ERROR
        else:
            code = status.HTTP_400_BAD_REQUEST
        return Response(result.as_envelope(), status=code)
