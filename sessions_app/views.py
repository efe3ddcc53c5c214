"""REST endpoints for a user's own agent sessions; anyone else's session is answered 404."""

from rest_framework import exceptions, generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import organization_of
from agent_tools.services import tools_for_mode
from aptix_site.api import Pagination
from modes.catalog import UnknownModeError, build_system_prompt

from .exceptions import SessionNotFound
from .models import AgentSession
from .selectors import InvalidSessionId, get_owned_session, mode_changes_of, sessions_of
from .serializers import AgentSessionSerializer, ModeChangeSerializer, SessionCreateRequest
from .services import create_session


def owned_session_or_404(request, session_id) -> AgentSession:
    try:
        return get_owned_session(session_id=session_id, user=request.user)
    except (InvalidSessionId, AgentSession.DoesNotExist):
        raise SessionNotFound(f"No session {session_id} was found for you.") from None


class SessionListCreateView(generics.ListAPIView):
    serializer_class = AgentSessionSerializer
    pagination_class = Pagination

    def get_queryset(self):
        return sessions_of(user=self.request.user)

    def post(self, request):
        body = SessionCreateRequest(data=request.data)
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
    def get(self, request, session_id):
        return Response(AgentSessionSerializer(owned_session_or_404(request, session_id)).data)


class ModeChangeListView(generics.ListAPIView):
    serializer_class = ModeChangeSerializer
    pagination_class = Pagination

    def get_queryset(self):
        return mode_changes_of(session=owned_session_or_404(self.request, self.kwargs["session_id"]))


class SessionContextView(APIView):
    """Everything an agent needs for its next LLM call in this session."""

    def get(self, request, session_id):
        session = owned_session_or_404(request, session_id)
        return Response(
            {
                "systemPrompt": build_system_prompt(session.mode.key),
                "tools": [tool.get_schema() for tool in tools_for_mode(session.mode)],
            }
        )
