"""Refuses oversized API request bodies with 413 before anything reads them."""

from django.conf import settings
from django.http import JsonResponse


class RequestBodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return JsonResponse(
                    {"detail": f"The request body is {length} bytes; the limit is {settings.API_MAX_BODY_BYTES}."},
                    status=413,
                )
        return self.get_response(request)
