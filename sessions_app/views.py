"""REST endpoints for a user's own agent sessions; anyone else's session is answered 404."""

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import organization_of
from agent_tools.serializers import ToolFormatQuery
from agent_tools.services import llm_context_json
from aptix_site.api import Pagination, SettingsRateThrottle, error_responses
from modes.catalog import UnknownModeError

from .exceptions import SessionNotFound
from .models import AgentSession
from .selectors import InvalidSessionId, get_owned_session, mode_changes_of, sessions_of
from .serializers import AgentSessionSerializer, ModeChangeSerializer, SessionCreate
from .services import create_session


def owned_session_or_404(request, session_id) -> AgentSession:
    try:
        return get_owned_session(session_id=session_id, user=request.user)
    except (InvalidSessionId, AgentSession.DoesNotExist):
        raise SessionNotFound(f"No session {session_id} was found for you.") from None


class SessionContextResponse(serializers.Serializer):
    systemPrompt = serializers.CharField(help_text="The Mode Catalog block for the session's current mode.")
    tools = serializers.ListField(
        child=serializers.DictField(),
        help_text="The tools the mode enables, always agent_change_mode (whose 'mode' lists the catalog's keys), "
        "in the shape ?tool_format= asks for.",
    )
    clientTools = serializers.ListField(
        child=serializers.CharField(), help_text="Names of the tools above that the agent's client executes itself."
    )
    unresolvedToolIds = serializers.ListField(
        child=serializers.CharField(),
        help_text="Tool ids the mode lists that name no registered or declared tool; the model is not told of them.",
    )


class SessionListCreateView(generics.ListAPIView):
    serializer_class = AgentSessionSerializer
    pagination_class = Pagination
    throttle_scope = "session-create"

    def get_throttles(self):
        return [SettingsRateThrottle()] if self.request.method == "POST" else []

    def get_queryset(self):
        return sessions_of(user=self.request.user)

    @extend_schema(operation_id="listSessions", responses={200: AgentSessionSerializer(many=True), **error_responses(400, 401, 404)})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="createSession",
        request=SessionCreate,
        responses={201: AgentSessionSerializer, **error_responses(400, 401, 403, 411, 413, 415, 429)},
    )
    def post(self, request):
        body = SessionCreate(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            session = create_session(
                owner=request.user,
                org=organization_of(request.user),
                mode_key=body.validated_data["mode"] or None,
                title=body.validated_data["title"],
            )
        except UnknownModeError as error:
            raise exceptions.ValidationError({"mode": [str(error)]}) from None
        return Response(AgentSessionSerializer(session).data, status=status.HTTP_201_CREATED)


class SessionDetailView(APIView):
    @extend_schema(operation_id="getSession", responses={200: AgentSessionSerializer, **error_responses(400, 401, 404)})
    def get(self, request, session_id):
        return Response(AgentSessionSerializer(owned_session_or_404(request, session_id)).data)


class ModeChangeListView(generics.ListAPIView):
    serializer_class = ModeChangeSerializer
    pagination_class = Pagination

    @extend_schema(
        operation_id="listSessionModeChanges",
        responses={200: ModeChangeSerializer(many=True), **error_responses(400, 401, 404)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return mode_changes_of(session=owned_session_or_404(self.request, self.kwargs["session_id"]))


class SessionContextView(APIView):
    """Everything an agent needs for its next LLM call in this session."""

    @extend_schema(
        operation_id="getSessionContext",
        parameters=[ToolFormatQuery],
        responses={200: SessionContextResponse, **error_responses(400, 401, 404)},
    )
    def get(self, request, session_id):
        session = owned_session_or_404(request, session_id)
        query = ToolFormatQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return HttpResponse(
            llm_context_json(mode=session.mode, tool_format=query.validated_data["tool_format"]),
            content_type="application/json",
        )
