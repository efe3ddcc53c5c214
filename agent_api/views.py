"""REST endpoints for an agent back-end: the tools' schemas, invoking one, and a session's context."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from agent_tools.contract import InvokeResult
from aptix_site.api import error_responses
from aptix_site.throttling import WindowRateThrottle
from sessions_app.ownership import owned_session
from sessions_app.tools import answer_mode_change

from .serializers import (
    ConfirmationAnswer, Invocation, InvocationResponse, SessionContextQuery, SessionContextResponse, ToolFormatQuery,
    ToolSchemaListResponse
)
from .services import invocation_session, invoke_tool, llm_context, llm_context_at_revision, tool_list_payload


class ToolListView(APIView):
    @extend_schema(
        operation_id="listTools",
        parameters=[ToolFormatQuery],
        responses={200: ToolSchemaListResponse, **error_responses(400, 401)},
    )
    def get(self, request):
        query = ToolFormatQuery.from_query(request.query_params)
        return Response(tool_list_payload(catalog=request.catalog, tool_format=query["toolFormat"]))


# Every refusal, whatever raised it, is this envelope (aptix_site.errors.error_body).
INVOKE_ERROR_CODES = (400, 401, 403, 404, 405, 409, 411, 413, 415, 429, 500, 503)


class EnvelopeView(APIView):
    """A view that answers with a tool's envelope, its refusals too; counted against the tool-invoke limit."""

    throttle_classes = [WindowRateThrottle]
    throttle_scope = "tool-invoke"

    @staticmethod
    def error_body(message: str, status: int) -> dict:
        return InvocationResponse(InvokeResult.from_error(message)).data


class ToolInvokeView(EnvelopeView):
    @extend_schema(
        operation_id="invokeTool",
        request=Invocation,
        responses={200: InvocationResponse, **error_responses(*INVOKE_ERROR_CODES, body=InvocationResponse)},
        description="Runs a tool and answers with its envelope (successful, result, errorMessage). Every refusal "
        "has that envelope too, with successful false and a message for a person in errorMessage: "
        "the tool rejected its arguments (400), the API refused the request (400: a malformed body, an unknown "
        "field, a bad sessionId), the session's mode does not enable the tool (403), the tool or session is "
        "unknown (404), the agent's client executes the tool (409), the tool failed unexpectedly (500), or the "
        "database was too busy to finish it, nothing changed (503, with Retry-After).",
    )
    def post(self, request, name):
        invocation = Invocation.validated(request.data)
        session = invocation_session(session_id=invocation["sessionId"], user=request.user)
        result = invoke_tool(
            load_catalog=lambda: request.release.catalog_for(session),
            name=name,
            arguments=invocation["arguments"],
            session=session,
            conversation_id=invocation["conversationId"],
            user=request.user,
            confirmation_channel="rest",
        )
        return envelope_response(result, done=result.confirmation is not None)


def envelope_response(result: InvokeResult, *, done: bool = False) -> Response:
    """
    A tool's envelope, with its status: 200 if the tool succeeded, or if the request did what it asks though no mode
    changed (done: a question asked, a stay answered); else the status of why not.
    """
    if result.retry_after:
        headers = {"Retry-After": str(result.retry_after)}
        return Response(InvocationResponse(result).data, status=503, headers=headers)
    code = 200 if result.successful or done else 500 if result.server_fault else 400
    return Response(InvocationResponse(result).data, status=code)


class ConfirmationAnswerView(EnvelopeView):
    """The person's answer to agent_change_mode's question (MODE_CHANGE_CONFIRMATION = "user")."""

    @extend_schema(
        operation_id="answerModeChangeConfirmation",
        request=ConfirmationAnswer,
        responses={
            200: InvocationResponse,
            **error_responses(400, 401, 404, 409, 410, 411, 413, 415, 429, 500, 503, body=InvocationResponse),
        },
        description="Takes the person's answer to the question agent_change_mode asked, once, and answers with the "
        "tool's envelope: the change they chose (switch, or branch: switch and start a new session), judged again "
        "now; or, for stay, successful false with \"The user chose to stay in the current mode.\" (200 either way). "
        "Someone else's confirmation is a 404, a second answer a 409, one past its ten minutes a 410; a branch over "
        "the session-create limit is a 429 and leaves the question to be answered.",
    )
    def post(self, request, session_id, confirmation_id):
        session = owned_session(session_id=session_id, user=request.user)  # another's is not found, whatever is sent
        choice = ConfirmationAnswer.validated(request.data)["choice"]
        result = answer_mode_change(
            catalog=request.release.catalog_for(session), session_id=session.pk, confirmation_id=confirmation_id,
            user=request.user,
            choice=choice, channel="rest",
        )
        return envelope_response(result, done=choice == "stay")


class SessionContextView(APIView):
    """Everything an agent needs for its next LLM call in this session."""

    @extend_schema(
        operation_id="getSessionContext",
        parameters=[SessionContextQuery],
        responses={200: SessionContextResponse, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, session_id):
        session = owned_session(session_id=session_id, user=request.user)
        query = SessionContextQuery.from_query(request.query_params)
        tool_format, revision = query["toolFormat"], query["revision"]
        if revision is None:
            catalog = request.release.catalog_for(session)
            return Response(llm_context(catalog=catalog, mode_id=session.mode_id, tool_format=tool_format))
        return Response(
            llm_context_at_revision(session=session, revision=revision, viewer=request.user, tool_format=tool_format)
        )
