"""Error answers: Django's 400, 404 and 500 handlers (JSON under /api/, so that a REST client gets a body it can
parse), the 503 of a database that cannot serve (DRF's handler answers with it too), and the JSON 405. An error body
is {"detail": message}, unless the view the URL names has an error_body(message, status) method (the tool
invocation's envelope): then that shape, wherever the refusal comes from."""

import logging
import sys

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults

from .database import BUSY_RETRY_SECONDS, database_busy

API_PREFIX = "/api/"
MCP_PREFIX = "/mcp"
SERVER_ERROR_DETAIL = "The server failed to handle this request."

logger = logging.getLogger("aptix_site.errors")


def database_unreachable(exception) -> bool:
    """Whether exception is the database out of reach, not a faulty query (a 500)."""
    if not isinstance(exception, (OperationalError, InterfaceError)):
        return False
    raw = connection.connection  # None: the connection could not even be opened
    return raw is None or bool(getattr(raw, "broken", False) or getattr(raw, "closed", False))


def database_unavailable_response(request, exception, view=None) -> HttpResponse | None:
    """503 with Retry-After when the database is out of reach or busy past the request's limits (aptix_site.database):
    JSON under /api/ and /mcp, plain text elsewhere; None for any other error."""
    if database_busy(exception):
        detail = "The service's database is busy just now; try again in a few seconds."
    elif database_unreachable(exception):
        detail = "The service's database cannot be reached just now; try again in a few seconds."
    else:
        return None
    logger.warning("database unavailable while serving %s %s: %s", request.method, request.path, detail)
    if request.path.startswith((API_PREFIX, MCP_PREFIX)):
        response = api_error_response(request, detail, 503, view=view)
    else:
        response = HttpResponse(detail, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(BUSY_RETRY_SECONDS)
    return response


def error_message(detail) -> str:
    """One line for a person out of an error detail: a message, a list of them, or messages by field."""
    if isinstance(detail, dict):
        return " ".join(
            error_message(messages) if field in ("detail", "non_field_errors")
            else f"{field}: {error_message(messages)}"
            for field, messages in detail.items()
        )
    if isinstance(detail, list):
        return " ".join(error_message(item) for item in detail)
    return str(detail)


def error_body(view, detail, status: int) -> dict:
    """The error body of view (a class, an instance or None); detail is a message or the body DRF built."""
    if shape := getattr(view, "error_body", None):
        return shape(error_message(detail), status)
    return detail if isinstance(detail, (dict, list)) else {"detail": detail}


def api_error_response(request, detail, status: int, view=None) -> JsonResponse:
    """An error answered before or outside a view, in the shape of the view the URL names."""
    if view is None:
        try:
            view = getattr(resolve(request.path_info).func, "view_class", None)
        except Resolver404:
            pass
    return JsonResponse(error_body(view, detail, status), status=status)


def method_not_allowed_response(*, method: str, allowed: tuple[str, ...]) -> JsonResponse:
    """405 in DRF's words, with the Allow header that RFC 9110 requires: the methods this address serves."""
    response = JsonResponse({"detail": f'Method "{method}" not allowed.'}, status=405)
    response["Allow"] = ", ".join(allowed)
    return response


def refusal_detail(exception) -> str:
    """What to tell a client whose request Django refused as suspicious, without internals."""
    if isinstance(exception, TooManyFieldsSent):
        return f"The request has too many query or form fields; at most {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS}."
    if isinstance(exception, RequestDataTooBig):
        return f"The request body is over the limit of {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."
    return "The request was refused as malformed."


def bad_request(request, exception):
    if request.path.startswith(API_PREFIX):
        return api_error_response(request, refusal_detail(exception), 400)
    return defaults.bad_request(request, exception)


def page_not_found(request, exception):
    if request.path.startswith(MCP_PREFIX):
        return JsonResponse(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "No MCP endpoint has this URL."}},
            status=404,
        )
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "No API endpoint has this URL; /api/docs/ lists them."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    # Django calls this while handling the exception, so it is still at hand.
    if unavailable := database_unavailable_response(request, sys.exc_info()[1]):
        return unavailable
    if request.path.startswith(API_PREFIX):
        return api_error_response(request, SERVER_ERROR_DETAIL, 500)
    return defaults.server_error(request)
