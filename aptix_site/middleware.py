"""Request filters that run before any view: oversized API bodies (413) and NUL characters (400)."""

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


class RejectNulCharactersMiddleware:
    """
    Answers 400 to a NUL character in the URL or a form body: PostgreSQL cannot
    store or compare text holding one, so it would otherwise surface as a 500
    (in the admin's filters and actions, for instance).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", "") or self._form_has_nul(request):
            return JsonResponse({"detail": "NUL characters are not allowed in URLs or form data."}, status=400)
        return self.get_response(request)

    @staticmethod
    def _form_has_nul(request):
        return (
            request.method == "POST"
            and request.content_type == "application/x-www-form-urlencoded"
            and b"%00" in request.body
        )
