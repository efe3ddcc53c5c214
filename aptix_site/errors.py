"""
Django's 400, 404 and 500 handlers, answering JSON under /api/: a REST client
that asks for a URL no endpoint matches, or hits a refusal or failure outside
DRF's error handler (a middleware, say), gets a body it can parse rather than
an HTML page.
"""

from django.http import JsonResponse
from django.views import defaults

API_PREFIX = "/api/"
SERVER_ERROR_DETAIL = "The server failed to handle this request."
BAD_REQUEST_DETAIL = "The request was refused as malformed."


def bad_request(request, exception):
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": BAD_REQUEST_DETAIL}, status=400)
    return defaults.bad_request(request, exception)


def page_not_found(request, exception):
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "No API endpoint has this URL; /api/docs/ lists them."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": SERVER_ERROR_DETAIL}, status=500)
    return defaults.server_error(request)
