"""REST endpoints for a user's own agent sessions (anyone else's is answered 404), and the staff's transition counts."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import exceptions, generics, status
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import organization_of
from aptix_site.api import CursorPagination, error_responses
from aptix_site.throttling import WindowRateThrottle
from aptix_site.service_errors import NotFound
from modes.catalog import UnknownModeError
from modes.models import CatalogRollout
from modes.permissions import MayViewRevisions

from .ownership import owned_session
from .selectors import mode_changes_of, sessions_of
from .serializers import TRANSITIONS_RESPONSE, AgentSessionSerializer, ModeChangeSerializer
from .serializers import RolloutStatusResponse, SessionCreate, TransitionsQuery
from .services import create_session
from .transitions import transition_counts


class SessionPages(CursorPagination):
    ordering = "-created_at"  # newest first; index session_owner_created


class ModeChangePages(CursorPagination):
    ordering = "id"  # in the order the changes were made; index modechange_session_id


@extend_schema_view(
    get=extend_schema(
        operation_id="listSessions",
        responses={200: AgentSessionSerializer(many=True), **error_responses(400, 401, 404)},
    )
)
class SessionListCreateView(generics.ListAPIView):
    serializer_class = AgentSessionSerializer
    pagination_class = SessionPages
    throttle_scope = "session-create"

    def get_throttles(self):
        return [WindowRateThrottle()] if self.request.method == "POST" else []

    def get_queryset(self):
        return sessions_of(user=self.request.user)

    @extend_schema(
        operation_id="createSession",
        request=SessionCreate,
        responses={201: AgentSessionSerializer, **error_responses(400, 401, 403, 409, 411, 413, 415, 429)},
    )
    def post(self, request):
        body = SessionCreate.validated(request.data)
        try:
            session = create_session(
                release=request.release, owner=request.user, org=organization_of(request.user),
                mode_key=body["mode"], title=body["title"],
            )
        except UnknownModeError as error:
            raise exceptions.ValidationError({"mode": [str(error)]}) from None
        return Response(AgentSessionSerializer(session).data, status=status.HTTP_201_CREATED)


class SessionDetailView(APIView):
    @extend_schema(operation_id="getSession", responses={200: AgentSessionSerializer, **error_responses(400, 401, 404)})
    def get(self, request, session_id):
        session = owned_session(session_id=session_id, user=request.user, with_mode=True)
        return Response(AgentSessionSerializer(session).data)


@extend_schema_view(
    get=extend_schema(
        operation_id="listSessionModeChanges",
        responses={200: ModeChangeSerializer(many=True), **error_responses(400, 401, 404)},
    )
)
class ModeChangeListView(generics.ListAPIView):
    serializer_class = ModeChangeSerializer
    pagination_class = ModeChangePages

    def get_queryset(self):
        return mode_changes_of(session=owned_session(session_id=self.kwargs["session_id"], user=self.request.user))


class NoRollout(NotFound):
    message = "No catalog revision has been rolled out yet."


class RolloutView(APIView):
    permission_classes = [MayViewRevisions]

    @extend_schema(
        operation_id="getCatalogRollout",
        responses={200: RolloutStatusResponse, **error_responses(401, 403, 404)},
        description="The rollout in flight (inFlight true), or else the last one: who it serves, its guard, how it "
        "ended, and its cohort compared with the control's (sessions, mode changes, refusals by the mode graph, "
        "proposals the user declined, each also per session, and each revision's routing evaluation), first the "
        "rollout's revision, then the control. Needs modes.view_catalogrevision.",
    )
    def get(self, request):
        rollouts = CatalogRollout.objects.select_related("started_by", "ended_by")
        # The one in flight, whatever the hosts' clocks that stamped when the others started; else the latest.
        rollout = rollouts.filter(state=CatalogRollout.State.IN_FLIGHT).first() or rollouts.first()
        if rollout is None:
            raise NoRollout()
        return Response(RolloutStatusResponse(rollout).data)


class TransitionsView(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="getCatalogTransitions",
        parameters=[TransitionsQuery],
        responses={200: TRANSITIONS_RESPONSE, **error_responses(400, 401, 403, 404)},
        description="How agents moved between modes in the last `days` days (UTC dates, today included): the "
        "switches taken and how many branched, the switches the mode graph refused, the proposals the user "
        "declined, and the switches per day; with `revision`, only those under that catalog revision (404 if it "
        "does not exist). Modes are named by their keys. For staff only.",
    )
    def get(self, request):
        return Response(transition_counts(**TransitionsQuery.from_query(request.query_params)))
