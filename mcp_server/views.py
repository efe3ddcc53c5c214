"""
The MCP endpoints: MCP's streamable HTTP transport, stateless, each POST answered with one JSON message
(or 202 for a notification). /mcp/ serves what needs no session; /mcp/sessions/<id>/ one of the caller's
sessions (anyone else's is 404, as over REST). Authentication is the API token as a bearer token, the
REST throttle for tool calls applies to tools/call, and a web page of another origin is refused (origins.py).
"""

from django.http import HttpResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.throttling import WindowRateThrottle
from sessions_app.views import owned_session_or_404

from . import protocol
from .authentication import BearerTokenAuthentication
from .origins import origin_allowed
from .server import answer


class ForeignOrigin(exceptions.PermissionDenied):
    default_detail = (
        "Requests from this page's origin are not accepted. Serve the page from this server's origin, or add "
        "its origin to MCP_ALLOWED_ORIGINS."
    )
    default_code = "foreign_origin"


class McpView(APIView):
    http_method_names = ["post"]  # no event stream to GET, no session to DELETE
    schema = None  # MCP is described by its own specification, not the REST API's OpenAPI schema
    authentication_classes = [BearerTokenAuthentication]
    throttle_classes = []  # tools/call alone is throttled, once the message is read
    throttle_scope = "tool-invoke"

    @staticmethod
    def error_body(message: str, status: int) -> dict:
        # Refused before a message was read (an unknown session, a body too large, ...): there is no id.
        code = protocol.INTERNAL_ERROR if status >= 500 else protocol.INVALID_REQUEST
        return protocol.error_response(None, code, message)

    def initial(self, request, *args, **kwargs):
        if not origin_allowed(request):  # before anything else: a foreign page learns nothing, not even a 401
            raise ForeignOrigin()
        super().initial(request, *args, **kwargs)

    def post(self, request, session_id=None):
        session = None if session_id is None else owned_session_or_404(request, session_id)
        try:
            body = request.data
        except exceptions.ParseError as error:
            return Response(protocol.error_response(None, protocol.PARSE_ERROR, str(error.detail)), status=400)
        try:
            message = protocol.read_message(body, headers=request.headers)
            if message is None or message.is_notification:
                return HttpResponse(status=status.HTTP_202_ACCEPTED, content_type="application/json")
            result = answer(
                message, user=request.user, session=session, before_tool_call=lambda: self._throttle_tool_call(request)
            )
        except protocol.JsonRpcError as error:
            return Response(
                protocol.error_response(protocol.request_id_of(body), error.code, error.message, error.data),
                status=protocol.ERROR_HTTP_STATUS.get(error.code, status.HTTP_200_OK),
            )
        return Response(protocol.result_response(message, result))

    def _throttle_tool_call(self, request):
        throttle = WindowRateThrottle()
        if not throttle.allow_request(request, self):
            self.throttled(request, throttle.wait())
