"""
REST over routing evaluations, for staff: the cases (listed and added; holding modes.view_routingcase and
modes.add_routingcase), a revision's offline evaluation run and read (modes.add_routingevaluation,
modes.view_routingevaluation). The llm scorer takes minutes: only `manage.py eval_routing` runs it.
"""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.api import CursorPagination, NoBody, error_responses
from aptix_site.service_errors import NotFound

from ..models import RoutingCase
from ..permissions import may
from ..releases import get_revision
from ..views import revision_from_url
from .cases import save_case
from .evaluation import evaluation_payload, latest_evaluation
from .offline import run_offline_evaluation
from .serializers import EvaluationQuery, RoutingCaseRequest, RoutingCaseShape, RoutingEvaluationResponse


def holding(read: str, write: str):
    """A permission class: modes.<read> to GET, modes.<write> to POST (the same one where a POST answers what a GET
    would)."""

    class Holding(BasePermission):
        def has_permission(self, request, view):
            return may(request.user, read if request.method in ("GET", "HEAD", "OPTIONS") else write)

    return Holding


class CasePages(CursorPagination):
    ordering = "id"


@extend_schema_view(
    get=extend_schema(
        operation_id="listRoutingCases",
        responses={200: RoutingCaseShape(many=True), **error_responses(400, 401, 403, 404)},
        description="The routing cases, oldest first. Each mode's example utterances are cases too, not listed here. 404 "
        "for a cursor the list did not give.",
    ),
    post=extend_schema(
        operation_id="createRoutingCase", request=RoutingCaseRequest,
        responses={201: RoutingCaseShape, **error_responses(400, 401, 403, 411, 413, 415)},
        description="Add a case: 400 names an unknown mode, an empty utterance or one given already from that mode.",
    ),
)
class RoutingCaseListView(generics.ListAPIView):
    serializer_class = RoutingCaseShape
    pagination_class = CasePages
    permission_classes = [holding("view_routingcase", "add_routingcase")]
    queryset = RoutingCase.objects.all()

    def post(self, request):
        query = RoutingCaseRequest.validated(request.data)
        case = save_case(RoutingCase(utterance=query["utterance"], current_mode=query["currentMode"],
                                     expected=query["expected"]))
        return Response(RoutingCaseShape(case).data, status=status.HTTP_201_CREATED)


class RoutingEvaluationView(APIView):
    # Reading the answer needs the view permission too; running it, modes.add_routingevaluation, the service asks for.
    permission_classes = [holding("view_routingevaluation", "view_routingevaluation")]

    @extend_schema(
        operation_id="evaluateCatalogRevision", request=None,
        responses={201: RoutingEvaluationResponse, **error_responses(400, 401, 403, 404, 411, 413, 415)},
        description="Score revision n on the routing cases with the offline scorer (seconds; no network), store the "
        "evaluation with the revision and answer it, with what it moves against the published revision. Needs "
        "modes.add_routingevaluation and modes.view_routingevaluation.",
    )
    def post(self, request, number):
        NoBody.validated(request.data)
        evaluation = run_offline_evaluation(number=revision_from_url(number), user=request.user)
        return Response(RoutingEvaluationResponse(evaluation_payload(evaluation)).data, status=status.HTTP_201_CREATED)


class LatestRoutingEvaluationView(APIView):
    permission_classes = [holding("view_routingevaluation", "view_routingevaluation")]

    @extend_schema(
        operation_id="latestCatalogRevisionEvaluation", parameters=[EvaluationQuery],
        responses={200: RoutingEvaluationResponse, **error_responses(400, 401, 403, 404)},
        description="Revision n's latest evaluation by the scorer (offline by default); 404 if it has none.",
    )
    def get(self, request, number):
        number, scorer = revision_from_url(number), EvaluationQuery.from_query(request.query_params)["scorer"]
        evaluation = latest_evaluation(number=number, scorer=scorer)
        if evaluation is None:
            get_revision(number)  # a revision that does not exist says so
            raise NotFound(f"Revision {number} has no evaluation by the {scorer} scorer yet.")
        return Response(RoutingEvaluationResponse(evaluation_payload(evaluation)).data)
