"""REST endpoints for the agent tools: their schemas, and invoking one."""

from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.api import StrictSerializer

from .registry import registry
from .services import invoke_tool


class InvocationRequest(StrictSerializer):
    arguments = serializers.JSONField(required=False, allow_null=True, default=None)
    sessionId = serializers.CharField(required=False, allow_null=True, default=None, max_length=64)
    conversationId = serializers.CharField(required=False, allow_null=True, default=None, max_length=200)


class ToolListView(APIView):
    def get(self, request):
        return Response({"tools": [tool.get_schema() for tool in registry.tools()]})


class ToolInvokeView(APIView):
    def post(self, request, name):
        invocation = InvocationRequest(data=request.data)
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
