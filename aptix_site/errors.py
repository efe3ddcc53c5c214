"""
Django's 400, 404 and 500 handlers, answering JSON under /api/: a REST client
that asks for a URL no endpoint matches, or hits a refusal or failure outside
DRF's error handler (a middleware, say), gets a body it can parse rather than
an HTML page.
"""

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import JsonResponse
from django.views import defaults

API_PREFIX = "/api/"
SERVER_ERROR_DETAIL = "The server failed to handle this request."


def refusal_detail(exception) -> str:
    """What to tell a client whose request Django refused as suspicious, without internals."""
    if isinstance(exception, TooManyFieldsSent):
        return f"The request has too many query or form fields; at most {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS}."
    if isinstance(exception, RequestDataTooBig):
        return f"The request body is over the limit of {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."
    return "The request was refused as malformed."


def log_suspicious_request(exception) -> None:
    # The logger Django itself uses for these (django.security.DisallowedHost, ...), so alerts keep working.
    logging.getLogger(f"django.security.{type(exception).__name__}").error(str(exception))


def bad_request(request, exception):
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": refusal_detail(exception)}, status=400)
    return defaults.bad_request(request, exception)


def page_not_found(request, exception):
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "No API endpoint has this URL; /api/docs/ lists them."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": SERVER_ERROR_DETAIL}, status=500)
    return defaults.server_error(request)
