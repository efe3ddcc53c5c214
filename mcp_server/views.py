"""
The MCP endpoints: MCP's streamable HTTP transport, stateless, each POST answered with one JSON message
(or 202 for a notification). /mcp/ serves what needs no session; /mcp/sessions/<id>/ one of the caller's
sessions (anyone else's is 404, as over REST). Authentication is the API token as a bearer token, the
REST throttle for tool calls applies to tools/call, and a web page of another origin is refused (origins.py).
Which HTTP status an answer has depends on the request's protocol version (protocol.py); what is refused before
a message is read (no token 401, a foreign origin 403, a body too large 413, another's session 404) keeps its own.
"""

from django.http import HttpResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from aptix_site.throttling import WindowRateThrottle
from aptix_site.service_errors import RateLimited
from sessions_app.ownership import owned_session

from . import protocol
from .authentication import BearerTokenAuthentication
from .origins import origin_allowed
from .server import answer, may_write


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
        return protocol.JsonRpcError(code, message).reply(None)

    def initial(self, request, *args, **kwargs):
        if not origin_allowed(request):  # before anything else: a foreign page learns nothing, not even a 401
            raise ForeignOrigin()
        super().initial(request, *args, **kwargs)

    def post(self, request, session_id=None):
        session = None if session_id is None else owned_session(session_id=session_id, user=request.user)
        try:
            body = request.data
        except exceptions.ParseError as error:
            return self._unreadable(None, protocol.JsonRpcError(protocol.PARSE_ERROR, str(error.detail)))
        if isinstance(body, list):
            return self._batch(body, request, session)
        try:
            message = protocol.read_message(body, headers=request.headers)
        except protocol.JsonRpcError as error:
            return self._unreadable(body, error)
        if message is None or message.id is None:  # a response, or a notification
            return self._accepted()
        return self._answer(message, request, session)

    def _batch(self, body: list, request, session):
        """A 2025-03-26 batch: its requests' answers in one array, in their order (202 if it holds none)."""
        try:
            elements = protocol.batch_elements(body, headers=request.headers)
        except protocol.JsonRpcError as error:
            return self._unreadable(body, error)
        replies, used = [], 0
        for element in elements:
            try:
                message = protocol.read_message(element, headers=request.headers)
            except protocol.JsonRpcError as error:
                replies.append(error.reply(protocol.request_id_of(element)))
                continue
            if message is not None and message.id is not None:
                reply = self._answer(message, request, session, used=used).data
                replies.append(reply)
                used += protocol.response_size(reply)
                if session is not None and may_write(message):
                    # A mode change decides what the messages after it are answered for (the tools its mode enables,
                    # the instructions): as requests of their own would be, for the session's mode now.
                    session.refresh_from_db(fields=["mode"])
        return Response(replies) if replies else self._accepted()

    def _answer(self, message: protocol.Message, request, session, used=0) -> Response:
        """
        The reply to a request that was read, with its HTTP status and headers in the request's version; used: the
        bytes of the answers before it in its batch.
        """
        catalog = request.release.catalog_for(session)
        # A call that may change something (a mode change, an answered question) is answered whole once run, so that
        # no client is told to send again what was done: it runs only while the answers before it leave room.
        writes = may_write(message)
        try:
            if writes:
                protocol.check_room_left(used)
            result = answer(
                message, catalog=catalog, user=request.user, session=session,
                before_tool_call=lambda: self._throttle_tool_call(request),
            )
            reply = protocol.result_response(message, result)
            if not writes:
                protocol.check_response_size(reply, used=used)
        except protocol.JsonRpcError as error:
            # In the version of the message that was read (protocol's text).
            stateless = message.version == protocol.STATELESS_VERSION
            status_code = protocol.ERROR_HTTP_STATUS.get(error.code, 200) if stateless else 200
            retry = isinstance(error, protocol.ThrottledError) and status_code == status.HTTP_429_TOO_MANY_REQUESTS
            headers = {"Retry-After": str(error.retry_after)} if retry else None
            return Response(error.reply(message.id), status=status_code, headers=headers)
        return Response(reply)

    @staticmethod
    def _unreadable(body, error: protocol.JsonRpcError) -> Response:
        # A message that could not be read has the same status in every version, as in the SDK's own server.
        return Response(error.reply(protocol.request_id_of(body)), status=protocol.ERROR_HTTP_STATUS[error.code])

    @staticmethod
    def _accepted() -> HttpResponse:
        return HttpResponse(status=status.HTTP_202_ACCEPTED, content_type="application/json")

    def _throttle_tool_call(self, request):
        throttle = WindowRateThrottle()
        if not throttle.allow_request(request, self):
            raise RateLimited(str(exceptions.Throttled.default_detail), retry_after=throttle.wait())
