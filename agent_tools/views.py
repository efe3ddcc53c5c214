"""REST endpoints for the agent tools: their schemas, and invoking one."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.api import SettingsRateThrottle, StrictCharField, StrictSerializer, error_responses

from .contract import InvokeResult
from .serializers import ToolFormatQuery
from .services import invoke_tool, tool_list_payload


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
        child=serializers.DictField(),
        help_text="Every tool, registered or declared, sorted by name, in the shape ?tool_format= asks for.",
    )
    clientTools = serializers.ListField(
        child=serializers.CharField(),
        help_text="Names of the tools the agent's client executes itself; invoking one here answers 409.",
    )


class ToolListView(APIView):
    @extend_schema(
        operation_id="listTools",
        parameters=[ToolFormatQuery],
        responses={200: ToolSchemaListResponse, **error_responses(400, 401)},
    )
    def get(self, request):
        query = ToolFormatQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(tool_list_payload(tool_format=query.validated_data["tool_format"]))


# Every refusal below 401 and above, whatever raised it, is this envelope (aptix_site.errors.error_body).
INVOKE_ERROR_CODES = (400, 403, 404, 405, 409, 411, 413, 415, 429, 500)


class ToolInvokeView(APIView):
    throttle_classes = [SettingsRateThrottle]
    throttle_scope = "tool-invoke"

    @staticmethod
    def error_body(message: str) -> dict:
        return InvokeResult.from_error(message).as_envelope()

    @extend_schema(
        operation_id="invokeTool",
        request=Invocation,
        responses={
            200: InvocationResponse,
            **error_responses(401),
            **error_responses(*INVOKE_ERROR_CODES, body=InvocationResponse),
        },
        description="Runs a tool and answers with its envelope (successful, result, errorMessage). Every refusal "
        "but a 401 has that envelope too, with successful false and a message for a person in errorMessage: "
        "the tool rejected its arguments (400), the API refused the request (400: a malformed body, an unknown "
        "field, a bad sessionId), the session's mode does not enable the tool (403), the tool or session is "
        "unknown (404), the agent's client executes the tool (409), or the tool failed unexpectedly (500).",
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
