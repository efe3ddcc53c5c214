"""Request filters that run before any view: API bodies of unknown or excessive size, and NUL characters."""

from django.conf import settings

from .errors import api_error_response

# Under WSGI Django reads a body only up to its Content-Length, so a chunked body would be taken for an
# empty one and the request served as if nothing had been sent. The API asks for a length on every server.
LENGTH_REQUIRED = "Send the request body with a Content-Length header; chunked bodies are not accepted."


# The REST API and the MCP endpoints.
LIMITED_PATHS = ("/api/", "/mcp")


class RequestBodyLimitMiddleware:
    """Under /api/ and /mcp, a request that sends a body must say how long it is, and stay under the limit."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith(LIMITED_PATHS) and request.method not in ("GET", "HEAD", "OPTIONS"):
            refusal = self._refusal(request.META)
            if refusal:
                return api_error_response(request, *refusal)
        return self.get_response(request)

    @staticmethod
    def _refusal(meta) -> tuple[str, int] | None:
        if "HTTP_TRANSFER_ENCODING" in meta:
            return LENGTH_REQUIRED, 411
        raw = meta.get("CONTENT_LENGTH") or "0"
        if not (raw.isascii() and raw.isdigit()):
            return f"Content-Length must be a number of bytes, not {raw[:20]!r}.", 400
        limit = settings.API_MAX_BODY_BYTES
        # The length first: int() refuses a string of thousands of digits.
        if len(raw.lstrip("0")) > len(str(limit)) or int(raw) > limit:
            shown = raw if len(raw) <= 20 else f"{raw[:20]}... ({len(raw)} digits)"
            return f"The request body is {shown} bytes; the limit is {limit}.", 413
        return None


class RejectNulCharactersMiddleware:
    """
    Answers 400 to a NUL character in the URL, a cookie or a form body: PostgreSQL
    cannot store or compare text holding one, so it would otherwise surface as a
    500 (in the admin's filters and actions, or looking up a session cookie).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (
            "\x00" in request.path
            or "%00" in request.META.get("QUERY_STRING", "")
            # Django decodes a quoted cookie's octal escapes, so a plain-ASCII header can carry a NUL.
            or any("\x00" in value for value in request.COOKIES.values())
            or self._form_has_nul(request)
        ):
            return api_error_response(request, "NUL characters are not allowed in URLs, cookies or form data.", 400)
        return self.get_response(request)

    @staticmethod
    def _form_has_nul(request):
        return (
            request.method == "POST"
            and request.content_type == "application/x-www-form-urlencoded"
            and b"%00" in request.body
        )
